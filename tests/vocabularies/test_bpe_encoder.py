"""The pure-Python BPE encoder of ``o200k_base`` and ``cl100k_base`` against ``tiktoken`` itself,
built from the same ranks and pattern (no download), and the vocabulary's binary format."""
from __future__ import annotations

import pytest
import tiktoken
from hypothesis import given, settings, strategies as st

from sitebuild import vocabularies as site_vocabularies
from vocabularies import BpeEncoder, pack, unpack
from vocabularies.pretokenize import translate

NAMES = site_vocabularies.NAMES

# Text of many kinds: Spanish prose with its punctuation, English contractions in both cases,
# code, JSON, numbers of every length, whitespace of every kind (the pattern's hardest part),
# emoji, CJK and combining marks.
SAMPLES = [
    "—¿Y tú qué sabes? —dijo Tristana, riéndose—. ¡Ay, Saturna, qué cosas tan raras!",
    "I'LL say it's THEY'RE and we've, they'd, you'm 'S 's",
    'def f(x):\n\treturn {"a": [1, 2.5e-3, null], "b": "\\u00e9"}\r\n\r\n',
    "1 12 123 1234 12345 123456 ١٢٣ 一二三 ½ Ⅻ",
    "a  b   c\u00a0\u00a0d \u2028e\u3000f\x1c\x1dg\n\n\n  \n h   ",
    "emoji 👩‍👩‍👧 🇪🇸 e\u0301 ñ n\u0303 日本語のテキスト 한국어",
    "{\"name\": \"Juliana\", \"age\": 34, \"tags\": [\"a\", \"b\"]}",
    "   leading and trailing spaces   ",
    "",
]


@pytest.fixture(scope="module", params=NAMES)
def pair(request):
    vocab = site_vocabularies.read(request.param)
    reference = tiktoken.Encoding(vocab.name, pat_str=vocab.pat_str, special_tokens={},
                                  mergeable_ranks={t: i for i, t in enumerate(vocab.tokens)})
    return BpeEncoder(vocab), reference


def test_the_vocabularies_have_their_published_sizes():
    # tiktoken's own figures: 199,998 mergeable ranks in o200k_base, 100,256 in cl100k_base.
    sizes = {name: len(site_vocabularies.read(name)) for name in NAMES}
    assert sizes == {"o200k_base": 199_998, "cl100k_base": 100_256}


@pytest.mark.parametrize("text", SAMPLES)
def test_samples_encode_as_tiktoken_does(pair, text):
    ours, reference = pair
    ids = ours.encode(text)
    assert ids == reference.encode_ordinary(text)
    assert ours.decode(ids) == text.encode("utf-8")


def test_the_corpus_opening_encodes_as_tiktoken_does(pair):
    # A long stretch of the course's own training text, when the shared folder is there.
    from pathlib import Path
    corpus = Path(__file__).resolve().parents[3] / "shared" / "corpus"
    texts = sorted(corpus.glob("*.txt"))
    if not texts:
        pytest.skip("../shared/corpus is not here")
    text = texts[0].read_text(encoding="utf-8")[:60_000]
    ours, reference = pair
    assert ours.encode(text) == reference.encode_ordinary(text)


# Characters Python's Unicode tables know (not unassigned, not surrogates): a later Unicode
# version in tiktoken's Rust regex may class a newer character differently.
CHARS = st.characters(exclude_categories=("Cn", "Cs"))
TRICKY = st.sampled_from(list(" \t\n\r\x0b\x0c\x1c\x85\u00a0\u2028\u3000'sStTdDmMlLvVrReE09½٣"
                              "{}\":,[]-_./\\😀é\u0301"))


@settings(max_examples=300)
@given(text=st.text(st.one_of(CHARS, TRICKY), max_size=40))
def test_any_text_encodes_as_tiktoken_does(pair, text):
    ours, reference = pair
    assert ours.encode(text) == reference.encode_ordinary(text)


def test_pieces_join_back_into_the_text(pair):
    ours, _ = pair
    for text in SAMPLES:
        assert "".join(ours.pieces(text)) == text


def test_the_binary_round_trips_and_refuses_a_changed_byte():
    vocab = site_vocabularies.read("cl100k_base")
    data, manifest = pack(vocab)
    assert manifest["n_tokens"] == len(vocab.tokens) and len(data) == manifest["nbytes"]
    assert unpack(data, manifest).tokens == vocab.tokens
    broken = bytes([data[0] ^ 1]) + data[1:]
    with pytest.raises(ValueError, match="sha256"):
        unpack(broken, manifest)


def test_an_unknown_property_is_refused():
    with pytest.raises(ValueError, match=r"\\p\{Zz\}"):
        translate(r"\p{Zz}+")
