"""The GPT forward pass in NumPy (no PyTorch), for CPython and Pyodide alike.

Architecture (Radford et al., 2019, GPT-2; layout as in Karpathy's nanoGPT): token embedding plus
learned position embedding, ``n_layer`` pre-LayerNorm blocks (causal multi-head self-attention, then
an MLP with GELU, each added to the residual stream), a final LayerNorm, and an output head tied to the
token embedding. GELU is the tanh approximation (Hendrycks and Gimpel, 2016) on both the PyTorch and
the NumPy side, since NumPy has no vectorized erf.

Two ways to run it:

- ``model.forward(ids)``: logits for every position of a batch of equal-length prefixes.
- ``cache = model.new_cache(batch)`` then ``model.step(ids, cache)`` repeatedly: incremental decoding
  with a key/value cache, so each new token costs one position of work.
"""

from __future__ import annotations

import numpy as np

from .bpe import weights_dir
from .checkpoint import load_weights
from .config import GPTConfig


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis (Ba et al., 2016). x: float32[..., d]."""
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return 0.5 * x * (1.0 + np.tanh(np.float32(0.7978845608028654) * (x + np.float32(0.044715) * x * x * x)))


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax (float32 in, float32 out)."""
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


class KVCache:
    """Keys and values of every layer for a batch of sequences that grow together.

    k[i], v[i]: float32[batch, n_head, n_ctx, head_dim] (preallocated); ``length``: positions filled.
    """

    def __init__(self, cfg: GPTConfig, batch: int):
        shape = (batch, cfg.n_head, cfg.n_ctx, cfg.head_dim)
        self.k = [np.zeros(shape, dtype=np.float32) for _ in range(cfg.n_layer)]
        self.v = [np.zeros(shape, dtype=np.float32) for _ in range(cfg.n_layer)]
        self.length = 0

    @property
    def batch(self) -> int:
        return self.k[0].shape[0]

    def select(self, rows) -> "KVCache":
        """A new cache holding the given batch rows (int[n], repeats allowed), e.g. to branch a prefix."""
        new = object.__new__(KVCache)
        rows = np.asarray(rows, dtype=np.int64)
        new.k = [k[rows] for k in self.k]
        new.v = [v[rows] for v in self.v]
        new.length = self.length
        return new


class GPT:
    """A trained GPT. ``params`` maps the names of ``config.parameter_shapes`` to float32 arrays."""

    def __init__(self, cfg: GPTConfig, params: dict):
        self.config = cfg
        f32 = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
        self.wte = f32(params["wte"])  # (V, d), also the output head
        self.wpe = f32(params["wpe"])  # (n_ctx, d)
        self.blocks = []
        for i in range(cfg.n_layer):
            p = lambda n: params[f"h.{i}.{n}"]  # noqa: E731
            # Linear weights are stored (out, in) as in PyTorch; keep (in, out) copies for x @ W.
            self.blocks.append({
                "ln_1": (f32(p("ln_1.weight")), f32(p("ln_1.bias"))),
                "c_attn": (f32(p("attn.c_attn.weight").T), f32(p("attn.c_attn.bias"))),
                "attn_proj": (f32(p("attn.c_proj.weight").T), f32(p("attn.c_proj.bias"))),
                "ln_2": (f32(p("ln_2.weight")), f32(p("ln_2.bias"))),
                "c_fc": (f32(p("mlp.c_fc.weight").T), f32(p("mlp.c_fc.bias"))),
                "mlp_proj": (f32(p("mlp.c_proj.weight").T), f32(p("mlp.c_proj.bias"))),
            })
        self.ln_f = (f32(params["ln_f.weight"]), f32(params["ln_f.bias"]))
        self.head = np.ascontiguousarray(self.wte.T)  # (d, V)

    def new_cache(self, batch: int = 1) -> KVCache:
        """An empty key/value cache for ``batch`` sequences."""
        return KVCache(self.config, batch)

    def forward(self, ids) -> np.ndarray:
        """Logits for a batch of prefixes, computed from scratch.

        ids: int[batch, T] (or int[T], treated as batch 1), 1 <= T <= n_ctx, each id < vocab_size.
        Returns logits: float32[batch, T, vocab_size]. Raises ValueError on a bad shape or id.
        """
        ids = np.asarray(ids)
        if ids.ndim == 1:
            ids = ids[None, :]
        return self.step(ids, self.new_cache(ids.shape[0]))

    def step(self, ids, cache: KVCache) -> np.ndarray:
        """Run new tokens after what ``cache`` holds, and append their keys and values to it.

        ids: int[batch, T_new] with batch == cache.batch and cache.length + T_new <= n_ctx.
        Returns logits: float32[batch, T_new, vocab_size]. Mutates ``cache``.
        Raises ValueError if the context would overflow, the batch differs, or an id is out of range.
        """
        cfg = self.config
        ids = np.asarray(ids, dtype=np.int64)
        if ids.ndim != 2 or ids.shape[1] == 0:
            raise ValueError(f"ids must be int[batch, T] with T >= 1, found shape {ids.shape}")
        b, t = ids.shape
        start = cache.length
        if b != cache.batch:
            raise ValueError(f"batch of ids ({b}) differs from the cache's batch ({cache.batch})")
        if start + t > cfg.n_ctx:
            raise ValueError(f"context overflow: {start} cached + {t} new tokens > n_ctx={cfg.n_ctx}")
        if ids.min() < 0 or ids.max() >= cfg.vocab_size:
            raise ValueError(f"token ids must be in 0..{cfg.vocab_size - 1}")
        x = self.wte[ids] + self.wpe[start:start + t]  # (B, T, d)
        for layer, blk in enumerate(self.blocks):
            x = x + self._attention(layer_norm(x, *blk["ln_1"], cfg.layer_norm_eps), blk, cache, layer)
            h = layer_norm(x, *blk["ln_2"], cfg.layer_norm_eps)
            x = x + gelu(h @ blk["c_fc"][0] + blk["c_fc"][1]) @ blk["mlp_proj"][0] + blk["mlp_proj"][1]
        cache.length = start + t
        x = layer_norm(x, *self.ln_f, cfg.layer_norm_eps)
        return x @ self.head  # (B, T, V)

    def _attention(self, x: np.ndarray, blk: dict, cache: KVCache, layer: int) -> np.ndarray:
        cfg = self.config
        b, t, d = x.shape
        h, hd, start = cfg.n_head, cfg.head_dim, cache.length
        qkv = x @ blk["c_attn"][0] + blk["c_attn"][1]  # (B, T, 3d)
        q, k, v = (qkv[..., i * d:(i + 1) * d].reshape(b, t, h, hd).transpose(0, 2, 1, 3) for i in range(3))  # (B, h, T, hd)
        cache.k[layer][:, :, start:start + t] = k
        cache.v[layer][:, :, start:start + t] = v
        keys = cache.k[layer][:, :, :start + t]  # (B, h, S, hd), S = start + T
        vals = cache.v[layer][:, :, :start + t]
        att = (q @ keys.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(hd))  # (B, h, T, S)
        if t > 1:  # query i (absolute position start + i) sees keys 0 .. start + i
            future = np.arange(start + t)[None, :] > (start + np.arange(t))[:, None]  # (T, S)
            att = np.where(future, np.float32(-np.inf), att)
        y = softmax(att) @ vals  # (B, h, T, hd)
        y = y.transpose(0, 2, 1, 3).reshape(b, t, d)  # (B, T, d)
        return y @ blk["attn_proj"][0] + blk["attn_proj"][1]


def load_model(folder=None) -> GPT:
    """The trained model from ``folder`` (default ``weights_dir()``: ``$MINIGPT_WEIGHTS`` or ``weights/``)."""
    cfg, params, _ = load_weights(folder or weights_dir())
    return GPT(cfg, params)
