"""The BPE tokenizer: round trips, agreement with a naive reference encoder, files, data split."""

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from minigpt.bpe import N_BYTES, Tokenizer, load_tokenizer, train_bpe, vocab_listing
from minigpt.data import CORPUS_FILES, default_corpus_dir, load_splits, split_text

TOK = load_tokenizer()
SPANISH = "abcdefghijklmnñopqrstuvwxyzáéíóúüÁÉÍÓÚÑ ¿?¡!«»—.,;:\n"


def naive_encode(tok: Tokenizer, data: bytes) -> list[int]:
    """Textbook BPE: while some adjacent pair has a merge, merge every occurrence (left to right) of the
    pair with the lowest merge rank. Pure Python, no NumPy, deliberately simple."""
    rank = {pair: k for k, pair in enumerate(tok.merges)}
    ids = list(data)
    while len(ids) >= 2:
        pairs = [(rank[p], p) for p in zip(ids, ids[1:]) if p in rank]
        if not pairs:
            break
        k, pair = min(pairs)
        out, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
                out.append(N_BYTES + k)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out
    return ids


def test_vocabulary_layout():
    assert len(TOK.vocab) == 512
    assert all(TOK.vocab[i] == bytes([i]) for i in range(256))
    for k, (a, b) in enumerate(TOK.merges):
        assert TOK.vocab[256 + k] == TOK.vocab[a] + TOK.vocab[b]
    assert len(set(TOK.vocab)) == 512, "two ids spell the same bytes"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(SPANISH) | st.characters(exclude_categories=("Cs",)), max_size=120))
def test_text_round_trip_and_naive_agreement(text):
    ids = TOK.encode(text)
    assert TOK.decode(ids) == text
    assert ids == naive_encode(TOK, text.encode("utf-8"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(256, 511), max_size=30))
def test_merge_heavy_input_matches_naive(token_ids):
    """Text glued from merge tokens exercises long chains of merges."""
    data = b"".join(TOK.vocab[i] for i in token_ids)
    ids = TOK.encode_bytes(data)
    assert ids == naive_encode(TOK, data)
    assert TOK.decode_bytes(ids) == data


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_bytes_round_trip(data):
    assert TOK.decode_bytes(TOK.encode_bytes(data)) == data
    assert TOK.encode_bytes(data) == naive_encode(TOK, data)


def test_runs_of_one_byte_merge_left_to_right():
    tok = Tokenizer([(97, 97)])  # 256 = "aa"
    assert tok.encode("aaaaa") == [256, 256, 97] == naive_encode(tok, b"aaaaa")


def test_fixed_examples():
    s = "¿Quién es la protagonista? Responde en JSON.\n«¡Ay, señora!» — 😀"
    assert TOK.decode(TOK.encode(s)) == s
    assert len(TOK.encode(s)) < len(s.encode("utf-8"))
    assert TOK.decode([0xC3]) == "\ufffd"  # half of a two-byte character
    with pytest.raises(IndexError):
        TOK.decode([512])


def test_merges_file_errors(tmp_path):
    bad = tmp_path / "merges.txt"
    bad.write_text("# header\n97 98\n97 x\n")
    with pytest.raises(ValueError, match=":3:"):
        Tokenizer.load(bad)
    bad.write_text("97 900\n")
    with pytest.raises(ValueError, match="merge 0"):
        Tokenizer.load(bad)


def test_save_load_round_trip(tmp_path):
    TOK.save(tmp_path)
    again = Tokenizer.load(tmp_path / "merges.txt")
    assert again.merges == TOK.merges
    assert (tmp_path / "vocab.txt").read_text(encoding="utf-8") == vocab_listing(TOK.vocab)


def test_committed_vocab_listing_matches_merges():
    listing = (Path(__file__).parents[2] / "weights" / "vocab.txt").read_text(encoding="utf-8")
    assert listing == vocab_listing(TOK.vocab)


def test_split_keeps_paragraphs_whole():
    text = "".join(f"paragraph {i} " * 7 + "\n" for i in range(100))
    train, val = split_text(text)
    assert train + val == text
    assert train.endswith("\n") and val.startswith("paragraph")
    assert 0.03 < len(val) / len(text) < 0.07


needs_corpus = pytest.mark.skipif(not all((default_corpus_dir() / f).exists() for f in CORPUS_FILES),
                                  reason="the corpus is not beside the repository (../shared/corpus)")


@needs_corpus
def test_training_is_deterministic_and_reproduces_committed_merges():
    train, val = load_splits()
    assert val and not set("{}\"") & set(train + val)
    assert train_bpe(train.encode("utf-8"), 256).merges == TOK.merges
