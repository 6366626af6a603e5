"""Validation figures of the mini-GPT on the held-out split (NumPy forward, no PyTorch).

    python -m minigpt.eval --corpus ../shared/corpus

The last line is ``val_bpb=X.XXX``: bits per byte on the validation split (``minigpt.data``), i.e. the
summed cross-entropy in bits divided by the split's UTF-8 bytes. The split is cut into windows of
n_ctx tokens, and every token after the first of each window is scored from its window's context.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from .bpe import load_tokenizer
from .data import load_splits
from .gpt import GPT, load_model


def cross_entropy_nats(model: GPT, ids: np.ndarray, batch: int = 8) -> tuple[float, int]:
    """Summed cross-entropy (nats) and the number of scored tokens, over windows of n_ctx + 1 tokens
    that overlap by one token (so each token after the first is scored exactly once).

    ids: int[n] with n >= 2.
    """
    n_ctx = model.config.n_ctx
    windows = [ids[s:s + n_ctx + 1] for s in range(0, len(ids) - 1, n_ctx)]
    total, count = 0.0, 0
    for w_len in sorted({len(w) for w in windows}):
        same = np.stack([w for w in windows if len(w) == w_len])  # (n, w_len)
        for b in range(0, len(same), batch):
            chunk = same[b:b + batch]
            logits = model.forward(chunk[:, :-1]).astype(np.float64)  # (B, T, V)
            logz = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + logits.max(-1)
            picked = np.take_along_axis(logits, chunk[:, 1:, None], axis=-1)[..., 0]
            total += float((logz - picked).sum())
            count += picked.size
    return total, count


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m minigpt.eval", description="Validation loss and bits per byte of the mini-GPT.")
    ap.add_argument("--corpus", default=None, help="folder with the three novels (default ../shared/corpus)")
    ap.add_argument("--weights", default=None, help="weights folder (default weights/)")
    args = ap.parse_args(argv)
    try:
        tok, model = load_tokenizer(args.weights), load_model(args.weights)
        _, val_text = load_splits(args.corpus)
    except (FileNotFoundError, ValueError) as e:
        ap.error(str(e))
    ids = np.array(tok.encode(val_text), dtype=np.int64)
    n_bytes = len(val_text.encode("utf-8"))
    nats, scored = cross_entropy_nats(model, ids)
    # Bytes of the scored tokens (all but the first) are the denominator of bits per byte.
    scored_bytes = n_bytes - len(tok.vocab[int(ids[0])])
    print(f"validation split: {n_bytes:,} bytes, {len(ids):,} tokens ({n_bytes / len(ids):.3f} bytes/token)")
    print(f"loss: {nats / scored:.4f} nats/token, {nats / scored / math.log(2):.4f} bits/token")
    print(f"val_bpb={nats / math.log(2) / scored_bytes:.3f}")


if __name__ == "__main__":
    main()
