"""Write ``weights/MODEL_CARD.md`` from the exported model (NumPy only; run after training).

    python -m minigpt.card --corpus ../shared/corpus
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from .bpe import load_tokenizer, weights_dir
from .checkpoint import load_weights
from .data import load_splits
from .eval import cross_entropy_nats
from .gpt import GPT
from .sample import generate, next_token_probs, token_text, top_tokens

LESSON_PROMPT = "¿Quién es la protagonista? Responde en JSON.\n"
SAMPLE_PROMPTS = ("Benina", "Tristana miró a don Lope", "La de Bringas")
CORPUS = ("Benito Pérez Galdós, *Misericordia* (1897), *Tristana* (1892) and *La de Bringas* (1884), from the TEI "
          "edition of the CLiGS \"Corpus de novelas de la Edad de Plata\" (textbox repository, spanish/novela-espanola, "
          "ne0002, ne0005, ne0027), edited by José Calvo Tello, CLiGS, University of Würzburg")
CREDIT = CORPUS + "; CC BY 4.0. The novels are in the public domain."
CC_BY = "https://creativecommons.org/licenses/by/4.0/"
# The card's last section: what the files derive from, under which license, and what was done with it.
LICENSE_SECTION = (
    "## License and credit",
    "The weights (`model.json`, `model.bin`) and the tokenizer (`merges.txt`, `vocab.txt`) derive from the "
    f"training corpus, a CC BY 4.0 edition of three novels in the public domain: {CORPUS}. That edition is "
    f"published under the Creative Commons Attribution 4.0 International license ({CC_BY}). Changes: its text was "
    "reduced to plain text (one paragraph per line; chapter headings, notes and markup removed), split into a "
    "training part and a held-out part, and used to train the tokenizer and the model. Keep this credit when you "
    "share these files.",
    "",
    "The project's code is under the MIT License (`LICENSE` at the root of the project).", "",
)


def card_text(folder: Path, corpus) -> str:
    cfg, params, manifest = load_weights(folder)
    model, tok, info = GPT(cfg, params), load_tokenizer(folder), manifest["training"]
    _, val_text = load_splits(corpus)
    ids = np.array(tok.encode(val_text), dtype=np.int64)
    nats, scored = cross_entropy_nats(model, ids)
    bpb = nats / math.log(2) / (len(val_text.encode("utf-8")) - len(tok.vocab[int(ids[0])]))
    probs = next_token_probs(model, tok.encode(LESSON_PROMPT))
    brace = tok.vocab.index(b"{")
    rank = int((probs > probs[brace]).sum()) + 1
    lines = [
        "# Model card: mini-GPT (Galdós)", "",
        "## Architecture",
        f"GPT with {cfg.n_layer} pre-LayerNorm transformer blocks, {cfg.n_head} causal self-attention heads of "
        f"{cfg.head_dim} dimensions, residual width {cfg.n_embd}, MLP width {4 * cfg.n_embd} (GELU, tanh form), "
        f"learned positions for a context of {cfg.n_ctx} tokens, final LayerNorm, output head tied to the token "
        f"embedding (fewer parameters and a regularizer on a small corpus). Vocabulary: {cfg.vocab_size} byte-level "
        "BPE tokens (256 bytes + 256 merges, `merges.txt`, listed in `vocab.txt`).", "",
        f"- parameters: {info.get('parameters', sum(p.size for p in params.values())):,}",
        f"- weights: `model.json` (manifest, format {manifest['format']} v{manifest['version']}) + `model.bin` "
        f"({manifest['bin']['nbytes']:,} bytes, float32)",
        "", "## Training",
        f"- tokens seen: {info.get('tokens_seen', 0):,} ({info.get('steps')} steps of {info.get('batch')} windows x "
        f"{cfg.n_ctx} tokens), AdamW, peak learning rate {info.get('peak_lr')}, cosine schedule, dropout {cfg.dropout}, "
        f"seed {info.get('seed')}",
        f"- training time: {info.get('train_seconds', 0) / 60:.1f} min on {info.get('torch_threads')} CPU threads (PyTorch)",
        "- data: the training split (first ~95% of each novel; the last 5% is held out, see `py/minigpt/data.py`)",
        f"- corpus: {CREDIT}", "",
        "## Validation (held-out last 5% of each novel, NumPy forward)",
        f"- loss: {nats / scored:.4f} nats/token ({len(val_text.encode('utf-8')) / len(ids):.3f} bytes/token)",
        f"- bits per byte: {bpb:.3f}", "",
        "## Lesson prompt",
        f"Prompt `{LESSON_PROMPT.strip()}` followed by a newline. Top-10 next tokens:", "",
        "| rank | id | bytes | text | p |", "|---|---|---|---|---|",
    ]
    for r, (i, esc, p) in enumerate(top_tokens(tok, probs, 10), start=1):
        lines.append(f"| {r} | {i} | `{esc}` | {token_text(tok, i)} | {p:.4f} |")
    lines += ["", f"`{{` (id {brace}): p = {probs[brace]:.3e}, rank {rank} of {len(probs)}.", "",
              "## Samples (temperature 1, 60 new tokens)", ""]
    for seed, prompt in enumerate(SAMPLE_PROMPTS):
        text = tok.decode(generate(model, tok.encode(prompt), 60, temperature=1.0, seed=seed))
        lines += [f"Seed {seed}, prompt `{prompt}`:", "", "> " + (prompt + text).replace("\n", "\n> "), ""]
    lines += LICENSE_SECTION
    return "\n".join(lines)


def write_card(folder=None, corpus=None) -> Path:
    folder = Path(folder or weights_dir())
    path = folder / "MODEL_CARD.md"
    path.write_text(card_text(folder, corpus), encoding="utf-8")
    print(f"wrote {path}")
    return path


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description="Write the model card.")
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--weights", default=None)
    args = ap.parse_args(argv)
    write_card(args.weights, args.corpus)


if __name__ == "__main__":
    main()
