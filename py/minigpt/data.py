"""The corpus and its train/validation split.

Each novel is one UTF-8 file, one paragraph per line. The validation split is the last 5% of each
novel's bytes, moved forward to the next paragraph start so that no paragraph is cut; the training
split is the rest. The validation split is never used to learn the BPE merges nor to train the model.
Training and validation text are the novels' splits joined by a newline, in file-name order.
"""

from __future__ import annotations

from pathlib import Path

VAL_FRACTION = 0.05
CORPUS_FILES = ("galdos-la-de-bringas.txt", "galdos-misericordia.txt", "galdos-tristana.txt")


def default_corpus_dir() -> Path:
    """``../shared/corpus`` relative to the repository root."""
    return Path(__file__).resolve().parents[3] / "shared" / "corpus"


def split_text(text: str, val_fraction: float = VAL_FRACTION) -> tuple[str, str]:
    """Split one novel into (train, validation) at the first paragraph start after ``1 - val_fraction``
    of its UTF-8 bytes. Returns two strings whose concatenation is ``text``."""
    data = text.encode("utf-8")
    cut = int(len(data) * (1 - val_fraction))
    nl = data.find(b"\n", cut)
    cut = len(data) if nl < 0 else nl + 1
    return data[:cut].decode("utf-8"), data[cut:].decode("utf-8")


def load_splits(corpus_dir=None) -> tuple[str, str]:
    """(train text, validation text) over the three novels in ``corpus_dir``.

    Raises FileNotFoundError naming the missing file and the folder searched.
    """
    folder = Path(corpus_dir) if corpus_dir else default_corpus_dir()
    train, val = [], []
    for name in CORPUS_FILES:
        path = folder / name
        if not path.exists():
            raise FileNotFoundError(f"corpus file {name} not found in {folder} (pass --corpus DIR)")
        t, v = split_text(path.read_text(encoding="utf-8"))
        train.append(t.strip("\n"))
        val.append(v.strip("\n"))
    return "\n".join(train) + "\n", "\n".join(val) + "\n"
