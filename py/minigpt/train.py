"""Retrain everything from the corpus: BPE merges, then the GPT (PyTorch, CPU), then export.

    python -m minigpt.train --corpus ../shared/corpus --out weights

Never imported by the site or the tests' default run: it needs ``torch`` (requirements-train.txt).
Steps: (1) split the corpus (``minigpt.data``), (2) learn 256 merges on the training split,
(3) train the GPT on random windows of the training split with AdamW and a cosine schedule, printing
progress and the validation loss, (4) export ``model.json`` + ``model.bin`` and a reference fixture
of PyTorch logits for the NumPy tests, (5) write the model card (``minigpt.card``).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .bpe import load_tokenizer, train_bpe
from .checkpoint import load_weights, save_weights
from .config import GPTConfig, parameter_shapes
from .data import load_splits

REFERENCE_PROMPTS = (
    "¿Quién es la protagonista? Responde en JSON.\n",
    "Benina salió de la iglesia",
    '{"personaje": "Almudena"} «¡Ay!» — ñandú 😀',
)


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.attn = nn.Module()
        self.attn.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.attn.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.mlp = nn.Module()
        self.mlp.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.mlp.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        b, t, d = x.shape
        h, hd = self.cfg.n_head, self.cfg.head_dim
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, h, hd).transpose(1, 2) for z in (q, k, v))  # (B, h, T, hd)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.cfg.dropout if self.training else 0.0)
        y = y.transpose(1, 2).reshape(b, t, d)
        x = x + self.drop(self.attn.c_proj(y))
        return x + self.drop(self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh")))


class TorchGPT(nn.Module):
    """The PyTorch twin of ``minigpt.gpt.GPT``: same parameter names (``wte.weight`` exports as ``wte``)."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.n_ctx, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.apply(self._init)
        for name, p in self.named_parameters():  # scaled init of residual projections (GPT-2)
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.bias)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.drop(self.wte(ids) + self.wpe(torch.arange(t, device=ids.device)))
        for block in self.h:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.T  # tied head: (B, T, V)

    def export_params(self) -> dict:
        """Parameters as float32 NumPy arrays under the names of ``parameter_shapes``."""
        out = {}
        for name, p in self.state_dict().items():
            out[name.removesuffix(".weight") if name in ("wte.weight", "wpe.weight") else name] = p.detach().cpu().numpy().astype(np.float32)
        missing = set(parameter_shapes(self.cfg)) ^ set(out)
        if missing:
            raise RuntimeError(f"export names differ from parameter_shapes: {sorted(missing)}")
        return out

    @classmethod
    def from_params(cls, cfg: GPTConfig, params: dict) -> "TorchGPT":
        model = cls(cfg)
        state = {("wte.weight" if n == "wte" else "wpe.weight" if n == "wpe" else n): torch.from_numpy(np.array(a)) for n, a in params.items()}
        model.load_state_dict(state)
        return model.eval()


def evaluate(model: TorchGPT, val: np.ndarray, n_ctx: int) -> float:
    """Mean cross-entropy (nats/token) over the whole validation split, in windows of n_ctx tokens,
    each token predicted once (the first token of each window from an empty context)."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for s in range(0, len(val) - 1, n_ctx):
            chunk = torch.from_numpy(val[s:s + n_ctx + 1].astype(np.int64))[None]
            logits = model(chunk[:, :-1])
            total += F.cross_entropy(logits[0], chunk[0, 1:], reduction="sum").item()
            count += chunk.shape[1] - 1
    model.train(was_training)
    return total / count


def lr_at(step: int, steps: int, peak: float, warmup: int) -> float:
    """Linear warm-up, then cosine decay to 10% of the peak."""
    if step < warmup:
        return peak * (step + 1) / warmup
    frac = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))


def train(cfg: GPTConfig, train_ids: np.ndarray, val_ids: np.ndarray, *, steps: int, batch: int,
          lr: float, seed: int, log=print) -> tuple[TorchGPT, dict]:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = TorchGPT(cfg)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=lr, betas=(0.9, 0.95))
    n_params = sum(p.numel() for p in model.parameters())
    log(f"parameters: {n_params:,}; train tokens {len(train_ids):,}; val tokens {len(val_ids):,}")
    t0, history = time.time(), []
    for step in range(steps):
        starts = rng.integers(0, len(train_ids) - cfg.n_ctx - 1, size=batch)
        xy = torch.from_numpy(np.stack([train_ids[s:s + cfg.n_ctx + 1] for s in starts]).astype(np.int64))
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, lr, warmup=min(200, steps // 10))
        loss = F.cross_entropy(model(xy[:, :-1]).reshape(-1, cfg.vocab_size), xy[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0 or step == steps - 1:
            el = time.time() - t0
            msg = f"step {step + 1}/{steps} loss {loss.item():.3f} | {el:.0f} s, eta {el / (step + 1) * (steps - step - 1):.0f} s"
            if step % 500 == 0 or step == steps - 1:
                val = evaluate(model, val_ids, cfg.n_ctx)
                history.append({"step": step + 1, "train_loss": round(loss.item(), 4), "val_loss": round(val, 4)})
                msg += f" | val {val:.3f} nats/token"
            log(msg, flush=True)
    info = {"parameters": n_params, "steps": steps, "batch": batch, "peak_lr": lr, "seed": seed,
            "tokens_seen": steps * batch * cfg.n_ctx, "train_seconds": round(time.time() - t0, 1),
            "torch_threads": torch.get_num_threads(), "history": history}
    return model.eval(), info


def write_reference(folder: Path, path: Path) -> None:
    """Load the exported weights in ``folder`` into PyTorch (eval mode) and save a few prompts' token ids
    and their logits (float32[T, V] each) as ``.npz`` (no pickle), for the NumPy tests."""
    cfg, params, _ = load_weights(folder)
    model, tok = TorchGPT.from_params(cfg, params), load_tokenizer(folder)
    arrays = {}
    with torch.no_grad():
        for i, prompt in enumerate(REFERENCE_PROMPTS):
            ids = np.array(tok.encode(prompt), dtype=np.int64)
            arrays[f"ids_{i}"] = ids
            arrays[f"logits_{i}"] = model(torch.from_numpy(ids)[None])[0].numpy().astype(np.float32)
    np.savez_compressed(path, **arrays)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=None, help="folder with the three novels (default ../shared/corpus)")
    ap.add_argument("--out", default="weights", help="output folder (default weights/)")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=1884)
    ap.add_argument("--fixture", default="tests/minigpt/fixtures/reference_logits.npz",
                    help="where to write the PyTorch reference logits for the NumPy tests")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reference-only", action="store_true",
                    help="only rewrite the reference fixture from the weights in --out")
    ap.add_argument("--n-layer", type=int, default=GPTConfig.n_layer)
    ap.add_argument("--n-embd", type=int, default=GPTConfig.n_embd)
    ap.add_argument("--n-head", type=int, default=GPTConfig.n_head)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    Path(args.fixture).parent.mkdir(parents=True, exist_ok=True)
    if args.reference_only:
        write_reference(out, Path(args.fixture))
        return
    train_text, val_text = load_splits(args.corpus)
    tok = train_bpe(train_text.encode("utf-8"), 256, log=print)
    tok.save(out)
    train_ids = np.array(tok.encode(train_text), dtype=np.int32)
    val_ids = np.array(tok.encode(val_text), dtype=np.int32)
    cfg = GPTConfig(n_layer=args.n_layer, n_embd=args.n_embd, n_head=args.n_head)
    model, info = train(cfg, train_ids, val_ids, steps=args.steps, batch=args.batch, lr=args.lr, seed=args.seed)
    info["val_loss_nats_per_token"] = round(evaluate(model, val_ids, cfg.n_ctx), 4)
    info["val_bytes_per_token"] = round(len(val_text.encode("utf-8")) / len(val_ids), 4)
    save_weights(out, cfg, model.export_params(), training=info)
    write_reference(out, Path(args.fixture))
    print(f"exported to {out}/: val {info['val_loss_nats_per_token']} nats/token", flush=True)
    from .card import write_card
    write_card(out, args.corpus)


if __name__ == "__main__":
    main()
