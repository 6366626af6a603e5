"""«Python en el navegador»: the prose's words about the vocabulary and the next tokens hold."""
import numpy as np
import pytest

import build
from lesson.marco import figures


@pytest.fixture(scope="module")
def fig(model, tok):
    return figures.compute_figures(model, tok)


def test_the_vocabulary_is_the_256_bytes_and_the_merges_of_merges_txt(fig):
    lines = (build.ROOT / "weights" / "merges.txt").read_text().splitlines()
    merges = [line for line in lines if line.strip() and not line.startswith("#")]
    assert fig["merges"] == len(merges)
    assert fig["bytes"] == 256 and fig["vocab"] == fig["bytes"] + fig["merges"]


@pytest.mark.parametrize("key, prompt", [("with_space", figures.WITH_SPACE),
                                         ("without_space", figures.WITHOUT_SPACE)])
def test_the_top_tokens_are_the_argsort_of_an_independent_float64_softmax(fig, model, tok, key, prompt):
    logits = model.forward(np.array([tok.encode(prompt)]))[0, -1].astype(np.float64)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    top = fig[key]
    assert [t["id"] for t in top] == list(np.argsort(-p)[:figures.TOP])
    assert np.allclose([t["p"] for t in top], p[[t["id"] for t in top]], rtol=1e-5)
    assert min(t["p"] for t in top) >= np.sort(p)[-figures.TOP]  # none outside is more likely


def test_the_words_of_the_prose_are_the_kinds_of_the_top_tokens(fig, tok):
    for key in ("with_space", "without_space"):
        for t in fig[key]:
            first = tok.vocab[t["id"]].decode("utf-8", "replace")[:1]
            assert (t["kind"] == "letter") == first.isalpha()
            assert (t["kind"] == "punctuation") == (not first.isalpha() and not first.isspace())
    assert fig["with_space_all_letter"] == all(t["kind"] == "letter" for t in fig["with_space"])
    assert fig["without_space_all_punctuation"] == all(
        t["kind"] == "punctuation" for t in fig["without_space"])
