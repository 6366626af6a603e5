"""Sampling from the mini-GPT, and the command line that prints continuations.

    python -m minigpt.sample --prompt "Benina" [--tokens 60] [--temperature 1.0] [--seed 0] [--top 10]

With ``--top K`` it also prints the K most probable next tokens after the prompt, with probabilities.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .bpe import Tokenizer, escape_bytes, load_tokenizer
from .gpt import GPT, load_model, softmax


def next_token_probs(model: GPT, ids: list[int], temperature: float = 1.0) -> np.ndarray:
    """p(next token | ids): float64[vocab]. Raises ValueError for an empty prompt or temperature <= 0."""
    if not ids:
        raise ValueError("the prompt must hold at least one token")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, found {temperature}")
    logits = model.forward(np.array([ids[-model.config.n_ctx:]]))[0, -1].astype(np.float64)
    return softmax(logits / temperature)


def top_tokens(tok: Tokenizer, probs: np.ndarray, k: int) -> list[tuple[int, str, float]]:
    """The k most probable tokens: (token id, escaped bytes, probability), most probable first."""
    order = np.argsort(-probs, kind="stable")[:k]
    return [(int(i), escape_bytes(tok.vocab[i]), float(probs[i])) for i in order]


def token_text(tok: Tokenizer, token_id: int) -> str:
    """The token as readable text (``repr`` of its UTF-8 text), or "" when its bytes are part of a character."""
    try:
        return repr(tok.vocab[token_id].decode("utf-8"))
    except UnicodeDecodeError:
        return ""


def generate(model: GPT, prompt_ids: list[int], n_tokens: int, *, temperature: float = 1.0,
             seed: int = 0) -> list[int]:
    """Sample ``n_tokens`` new token ids after ``prompt_ids`` (ancestral sampling, KV cache).

    When the context (n_ctx tokens) is full, the cache is rebuilt from the last n_ctx // 2 tokens.
    Deterministic for a given seed (NumPy ``default_rng``). Raises ValueError as ``next_token_probs``.
    """
    if not prompt_ids:
        raise ValueError("the prompt must hold at least one token")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, found {temperature}")
    rng = np.random.default_rng(seed)
    n_ctx = model.config.n_ctx
    history = list(prompt_ids)
    cache = model.new_cache(1)
    logits = model.step(np.array([history[-n_ctx:]]), cache)[0, -1]
    out: list[int] = []
    for _ in range(n_tokens):
        p = softmax(logits.astype(np.float64) / temperature)
        nxt = int(rng.choice(len(p), p=p))
        out.append(nxt)
        history.append(nxt)
        if cache.length == n_ctx:  # slide: keep the second half of the context
            cache = model.new_cache(1)
            logits = model.step(np.array([history[-(n_ctx // 2):]]), cache)[0, -1]
        else:
            logits = model.step(np.array([[nxt]]), cache)[0, -1]
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m minigpt.sample", description="Continue a prompt with the mini-GPT.",
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--prompt", required=True, help="text to continue (use $'...\\n' in bash for a newline)")
    ap.add_argument("--tokens", type=int, default=60, help="new tokens to sample")
    ap.add_argument("--temperature", type=float, default=1.0, help="softmax temperature (> 0), also applied to --top")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sampler (NumPy default_rng)")
    ap.add_argument("--top", type=int, default=0, metavar="K", help="also print the K most probable next tokens")
    ap.add_argument("--weights", default=None, help="weights folder (default: $MINIGPT_WEIGHTS or weights/)")
    args = ap.parse_args(argv)
    if args.temperature <= 0:
        ap.error("--temperature must be > 0")
    if args.tokens < 0 or args.top < 0:
        ap.error("--tokens and --top must be >= 0")
    try:
        tok, model = load_tokenizer(args.weights), load_model(args.weights)
    except (FileNotFoundError, ValueError) as e:
        ap.error(f"cannot load the model: {e}")
    ids = tok.encode(args.prompt)
    if not ids:
        ap.error("--prompt must not be empty")
    if len(ids) > model.config.n_ctx:
        print(f"note: the prompt has {len(ids)} tokens; the model sees only the last {model.config.n_ctx}",
              file=sys.stderr)
    if args.top:
        print(f"top {args.top} next tokens after the prompt (temperature {args.temperature}):")
        probs = next_token_probs(model, ids, args.temperature)
        for rank, (i, esc, p) in enumerate(top_tokens(tok, probs, args.top), start=1):
            print(f"{rank:>4}  id {i:>3}  {esc:<16} {token_text(tok, i):<10} p={p:.4f}")
        print()
    new = generate(model, ids, args.tokens, temperature=args.temperature, seed=args.seed)
    sys.stdout.write(args.prompt + tok.decode(new) + "\n")


if __name__ == "__main__":
    main()
