"""Byte-level byte-pair encoding (BPE) with a 512-token vocabulary.

Ids 0..255 are the single bytes (id = byte value); ids 256..511 are merges, each the concatenation of
two earlier tokens, learned on the training split of the corpus (see ``minigpt.data``).

Algorithm: Sennrich, Haddow and Birch (2016), "Neural Machine Translation of Rare Words with Subword
Units", applied to bytes as in GPT-2 (Radford et al., 2019), without a pre-tokenization regex: merges
may cross spaces. Encoding applies the merges in the order they were learned; this equals the textbook
rule "repeatedly merge the adjacent pair with the lowest merge rank, left to right", because a merge
can only create a token whose own pairs have a higher rank than itself.

Files (in ``weights/``):

- ``merges.txt``: one merge per line, ``<left id> <right id>``; line k (0-based, comments skipped) makes
  token id 256 + k.
- ``vocab.txt``: a readable listing, one token per line: id, the bytes escaped, and the text when the
  bytes are valid UTF-8 on their own.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

N_BYTES = 256
MERGES_FILE = "merges.txt"
VOCAB_FILE = "vocab.txt"
MERGES_HEADER = "# minigpt byte-level BPE merges, format 1: line k makes token 256+k = <left id> <right id>"


def weights_dir() -> Path:
    """The folder with the model files: ``$MINIGPT_WEIGHTS`` if set (the page's kernel sets it, see
    ``browser/kernel.py``), else the repository's ``weights/``."""
    env = os.environ.get("MINIGPT_WEIGHTS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "weights"


def merge_pair(ids: np.ndarray, left: int, right: int, new: int) -> np.ndarray:
    """Replace every non-overlapping occurrence of the pair (left, right), left to right, by ``new``.

    ids: int32[n]. Returns a new int32 array. For ``left == right`` a run such as ``a a a`` becomes
    ``new a`` (left to right), as a sequential scan would do.
    """
    if ids.size < 2:
        return ids
    hit = (ids[:-1] == left) & (ids[1:] == right)  # bool[n-1]: a pair starts at i
    if not hit.any():
        return ids
    if left == right:
        # Inside a run of consecutive hits only every other one (the 1st, 3rd, ...) can be merged.
        idx = np.flatnonzero(hit)
        run_start = np.ones(idx.size, dtype=bool)
        run_start[1:] = idx[1:] != idx[:-1] + 1
        run_id = np.cumsum(run_start) - 1
        first_of_run = idx[run_start][run_id]
        keep = (idx - first_of_run) % 2 == 0
        hit = np.zeros_like(hit)
        hit[idx[keep]] = True
    starts = np.flatnonzero(hit)
    out = ids.copy()
    out[starts] = new
    drop = np.zeros(ids.size, dtype=bool)
    drop[starts + 1] = True
    return out[~drop]


class Tokenizer:
    """A byte-level BPE tokenizer.

    Attributes:
        merges: list of (left id, right id); merge k makes token id 256 + k.
        vocab: list[bytes] of length 256 + len(merges); ``vocab[i]`` is the byte string of token i.
    """

    def __init__(self, merges: list[tuple[int, int]]):
        vocab = [bytes([i]) for i in range(N_BYTES)]
        for k, (a, b) in enumerate(merges):
            if not (0 <= a < len(vocab) and 0 <= b < len(vocab)):
                raise ValueError(f"merge {k} ({a}, {b}) refers to a token id not defined before it")
            vocab.append(vocab[a] + vocab[b])
        self.merges = list(merges)
        self.vocab = vocab

    def __len__(self) -> int:
        return len(self.vocab)

    # --- encoding ----------------------------------------------------------------------------
    def encode_bytes(self, data: bytes) -> list[int]:
        """Token ids (list[int]) for raw bytes; any byte string is encodable."""
        ids = np.frombuffer(bytes(data), dtype=np.uint8).astype(np.int32)
        for k, (a, b) in enumerate(self.merges):
            ids = merge_pair(ids, a, b, N_BYTES + k)
        return ids.tolist()

    def encode(self, text: str) -> list[int]:
        """Token ids (list[int]) of the UTF-8 bytes of ``text``."""
        return self.encode_bytes(text.encode("utf-8"))

    # --- decoding ----------------------------------------------------------------------------
    def decode_bytes(self, ids) -> bytes:
        """The bytes spelled by token ids. Raises IndexError for an id outside the vocabulary."""
        vocab = self.vocab
        for i in ids:
            if not 0 <= int(i) < len(vocab):
                raise IndexError(f"token id {i} is outside the vocabulary (0..{len(vocab) - 1})")
        return b"".join(vocab[int(i)] for i in ids)

    def decode(self, ids) -> str:
        """The text spelled by token ids; invalid UTF-8 (e.g. a cut multi-byte character) becomes U+FFFD."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    # --- files -------------------------------------------------------------------------------
    def save(self, folder) -> None:
        """Write ``merges.txt`` and ``vocab.txt`` into ``folder``."""
        folder = Path(folder)
        lines = [MERGES_HEADER] + [f"{a} {b}" for a, b in self.merges]
        (folder / MERGES_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
        (folder / VOCAB_FILE).write_text(vocab_listing(self.vocab), encoding="utf-8")

    @classmethod
    def load(cls, path) -> "Tokenizer":
        """Read a ``merges.txt`` file. Raises ValueError on a malformed line (with its line number)."""
        merges = []
        for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) != 2 or not all(p.isdigit() for p in parts):
                raise ValueError(f"{path}:{n}: expected two token ids '<left> <right>', found {line!r}")
            merges.append((int(parts[0]), int(parts[1])))
        return cls(merges)


def escape_bytes(b: bytes) -> str:
    """Printable ASCII stays as is; every other byte is written ``<0xHH>``."""
    return "".join(chr(c) if 0x21 <= c < 0x7F and c != 0x3C else f"<0x{c:02X}>" for c in b)


def vocab_listing(vocab: list[bytes]) -> str:
    """The readable vocabulary: ``id<TAB>escaped bytes<TAB>text`` (text only when valid UTF-8)."""
    rows = ["# id\tbytes (non-printable as <0xHH>)\ttext (when the bytes are valid UTF-8)"]
    for i, b in enumerate(vocab):
        try:
            text = repr(b.decode("utf-8"))
        except UnicodeDecodeError:
            text = ""
        rows.append(f"{i}\t{escape_bytes(b)}\t{text}")
    return "\n".join(rows) + "\n"


def train_bpe(data: bytes, n_merges: int = 256, log=None) -> Tokenizer:
    """Learn ``n_merges`` merges on ``data`` (bytes). Deterministic.

    At each step the most frequent adjacent pair is merged; ties go to the smallest (left, right)
    pair. Pairs are counted with overlaps (``aaa`` counts (a, a) twice), as in minbpe.
    """
    ids = np.frombuffer(data, dtype=np.uint8).astype(np.int32)
    merges: list[tuple[int, int]] = []
    vocab = [bytes([i]) for i in range(N_BYTES)]
    size = N_BYTES + n_merges
    for k in range(n_merges):
        codes = ids[:-1].astype(np.int64) * size + ids[1:]
        counts = np.bincount(codes, minlength=size * size)
        best = int(np.argmax(counts))  # argmax returns the first maximum: the smallest pair code
        if counts[best] < 2:
            break
        a, b = divmod(best, size)
        merges.append((a, b))
        vocab.append(vocab[a] + vocab[b])
        ids = merge_pair(ids, a, b, N_BYTES + k)
        if log and (k % 32 == 0 or k == n_merges - 1):
            log(f"merge {k + 1}/{n_merges}: {escape_bytes(vocab[-1])} (count {counts[best]}), {ids.size} tokens")
    return Tokenizer(merges)


def load_tokenizer(folder=None) -> Tokenizer:
    """The project's tokenizer from ``folder/merges.txt`` (default: ``weights_dir()``)."""
    return Tokenizer.load(Path(folder or weights_dir()) / MERGES_FILE)
