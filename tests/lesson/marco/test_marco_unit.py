"""«Python en el navegador»: the prose's words about the vocabulary and the next tokens hold."""
import unicodedata

import numpy as np
from hypothesis import given, settings, strategies as st
import pytest

import build
from lesson.i18n import get_language, set_language
from lesson.marco import figures
from lesson.numbers import en_decimal, es_decimal


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
    ids = [t["id"] for t in top]
    outside = np.delete(p, ids)
    assert p[ids].min() >= outside.max()  # none outside is more likely (both in float64)


def test_the_words_of_the_prose_are_the_kinds_of_the_top_tokens(fig, tok):
    for key in ("with_space", "without_space"):
        for t in fig[key]:
            first = tok.vocab[t["id"]].decode("utf-8", "replace")[:1]
            assert (t["kind"] == "letter") == first.isalpha()
            assert (t["kind"] == "punctuation") == (not first.isalpha() and not first.isspace())
    assert fig["with_space_all_letter"] == all(t["kind"] == "letter" for t in fig["with_space"])
    # «the five most likely tokens all start with a punctuation mark»: Unicode category P*
    assert fig["without_space_all_punctuation"] == all(
        unicodedata.category(tok.vocab[t["id"]].decode("utf-8", "replace")[:1]).startswith("P")
        for t in fig["without_space"])


def test_the_prompts_end_as_the_prose_says_and_the_first_merge_joins_a_and_space(fig, tok):
    assert fig["ends_explain"]  # the prose gives its explanation only then
    assert tok.merges[0] == (ord("a"), ord(" ")) and fig["first_merge"]["id"] == 256
    assert tok.encode(figures.WITH_SPACE)[-1] == 256
    assert tok.encode(figures.WITHOUT_SPACE)[-1] == ord("a")


def test_the_space_mass_is_the_sum_over_the_tokens_that_start_with_a_space(fig, model, tok):
    logits = model.forward(np.array([tok.encode(figures.WITHOUT_SPACE)]))[0, -1].astype(np.float64)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    spaced = [i for i, piece in enumerate(tok.vocab) if piece.startswith(b" ")]
    assert fig["space_mass_without"] == pytest.approx(p[spaced].sum(), rel=1e-4)
    assert fig["space_mass_without"] < fig["without_space"][-1]["p"]  # "solo": below the fifth token
    # «only sampling can produce that split, and the model gives it ...»: a probability, not zero
    assert 0 < fig["space_mass_without"]


def test_the_space_ends_tokens_and_one_token_alone_starts_with_it(fig, tok):
    """«el espacio va al final de los tokens: N terminan en espacio, y uno solo empieza por él, el
    propio ␣, así que esa probabilidad es la suya»: counted over the vocabulary's bytes."""
    starting = [i for i, piece in enumerate(tok.vocab) if piece.startswith(b" ")]
    ending = [i for i, piece in enumerate(tok.vocab) if piece.endswith(b" ")]
    assert [t["id"] for t in fig["space_initial"]] == starting == [ord(" ")]
    assert fig["space_final"] == len(ending) > 10 * len(starting)
    assert fig["first_merge"]["id"] in ending


def test_one_position_earlier_the_model_expects_the_space_inside_a_token(fig, model, tok):
    """«tras «La señor», da p a a␣, que escribe la a y el espacio juntos»: the stem is the prompt
    without its lone «a», and its most likely next token (float64 softmax) is «a␣»."""
    ids = tok.encode(figures.WITHOUT_SPACE)
    assert tok.encode(fig["stem"]) == ids[:-1] and fig["stem"] + "a" == figures.WITHOUT_SPACE
    logits = model.forward(np.array([ids[:-1]]))[0, -1].astype(np.float64)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    assert fig["stem_next"]["id"] == int(np.argmax(p)) == fig["first_merge"]["id"]
    assert fig["stem_next"]["p"] == pytest.approx(p[256], rel=1e-4)
    assert fig["stem_next_carries_space"] and tok.vocab[256] == b"a "
    assert fig["stem_next"]["p"] > 1000 * fig["space_mass_without"]  # the contrast the prose draws


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="aá ,.señor\n", max_size=40))
def test_never_a_lone_a_followed_by_a_token_that_starts_with_a_space(tok, text):
    """«una a sola nunca va seguida de un token que empiece por espacio»: merge 0 joins every
    «a␣» before any other merge, so the encoder can never leave the pair apart."""
    ids = tok.encode(text)
    for left, right in zip(ids, ids[1:]):
        assert not (left == ord("a") and tok.vocab[right].startswith(b" "))


@pytest.mark.parametrize("language", ["es", "en"])
def test_the_picture_draws_each_token_with_its_p_and_kind_on_one_scale(fig, language):
    import re
    from lesson.marco.picture import bar_width
    svg = fig["picture"][language]
    bars = re.findall(r'<rect x="[^"]+" y="[^"]+" width="([^"]+)" height="[^"]+" fill="[^"]+" '
                      r'data-kind="(\w+)" data-value="([^"]+)"/>', svg)
    tokens = fig["with_space"] + fig["without_space"]
    assert [(kind, float(value)) for _, kind, value in bars] == [(t["kind"], t["p"]) for t in tokens]
    scale = max(t["p"] for t in tokens)
    for (width, _, value) in bars:
        assert float(width) == pytest.approx(bar_width(float(value), scale), abs=0.01)
    assert max(float(w) for w, _, _ in bars) == pytest.approx(bar_width(scale, scale), abs=0.01)
    assert '<title id="next-tokens-title">' in svg and 'role="img"' in svg


def test_the_figures_text_is_in_both_languages_and_the_language_is_restored(fig):
    assert get_language() == "es"
    assert set(fig["picture"]) == set(fig["top_word"]) == {"es", "en"}
    assert fig["top_word"] == {"es": "cinco", "en": "five"} and figures.TOP == 5


def test_the_english_picture_has_no_spanish_label_and_no_decimal_comma_and_the_same_numbers(fig):
    import re
    es, en = fig["picture"]["es"], fig["picture"]["en"]
    assert "Tras «" in es and "Los tokens más probables." in es
    assert "Tras" not in en and "más probables" not in en
    assert "After «La señora␣»: " in en and "After «La señora»: " in en
    assert "The most likely next tokens." in en
    # the prompts stay Spanish: the panel titles are the same in both
    assert re.findall(r"font-weight=\"600\"[^>]*>([^<]*)<", es) == re.findall(
        r"font-weight=\"600\"[^>]*>([^<]*)<", en) == ["«La señora␣»", "«La señora»"]
    # the same bars, and the same numbers written with a point instead of a comma
    def bars(svg):
        return re.findall(r"<rect [^>]*/>", svg)
    assert bars(es) == bars(en)
    written_es = re.findall(r"\d+,\d{3}", es)
    written_en = re.findall(r"\d+\.\d{3}(?!\d)", re.sub(r'"[^"]*"', '""', en))
    assert not re.search(r"\d,\d", re.sub(r'"[^"]*"', '""', en))  # no decimal comma outside attributes
    assert [w.replace(",", ".") for w in written_es] == written_en
    tokens = fig["with_space"] + fig["without_space"]
    for t in tokens:
        assert f'>{en_decimal(t["p"], 3)}</text>' in en and f'>{es_decimal(t["p"], 3)}</text>' in es


def test_number_word_follows_the_current_language():
    try:
        assert [figures.number_word(n) for n in (0, 5, 6)] == ["cero", "cinco", "seis"]
        set_language("en")
        assert [figures.number_word(n) for n in range(7)] == [
            "zero", "one", "two", "three", "four", "five", "six"]
        with pytest.raises(IndexError):
            figures.number_word(7)
        with pytest.raises(IndexError):
            figures.number_word(-1)
    finally:
        set_language("es")
