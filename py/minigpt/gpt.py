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

import sys

import numpy as np

from .bpe import weights_dir
from .checkpoint import load_weights
from .config import GPTConfig


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis (Ba et al., 2016). x: float[..., d], float32 or float64."""
    centred = x - x.mean(axis=-1, keepdims=True)
    var = np.square(centred).mean(axis=-1, keepdims=True)
    centred /= np.sqrt(var + eps)
    centred *= w
    centred += b
    return centred


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).

    Computed as x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)), the same function, since one exp is
    cheaper than one tanh in WebAssembly.
    """
    u = x * x
    u *= x
    u *= 0.044715
    u += x
    u *= -1.5957691216057308
    with np.errstate(over="ignore"):  # exp overflows to inf for very negative x: x / inf = -0
        np.exp(u, out=u)
    u += 1.0
    return np.divide(x, u, out=u)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax; keeps the input dtype."""
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable log of the softmax (log-sum-exp); keeps the input dtype."""
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


class KVCache:
    """Keys and values of every layer for a batch of sequences that grow together.

    k[i], v[i]: float[batch, n_head, capacity, head_dim], the positions this cache owns.
    ``prefix``: None, or a batch-1 cache whose positions come first in every row, shared and never
    copied (see :meth:`branch`). ``length``: positions seen by each row, the prefix's included.
    """

    def __init__(self, cfg: GPTConfig, batch: int, dtype=np.float32):
        self.prefix: KVCache | None = None  # set by branch()
        self.offset = 0  # positions of the prefix
        shape = (batch, cfg.n_head, cfg.n_ctx, cfg.head_dim)
        self.k = [np.zeros(shape, dtype=dtype) for _ in range(cfg.n_layer)]
        self.v = [np.zeros(shape, dtype=dtype) for _ in range(cfg.n_layer)]
        self.filled = 0  # positions held in self.k / self.v

    @property
    def batch(self) -> int:
        return self.k[0].shape[0]

    @property
    def length(self) -> int:
        return self.offset + self.filled

    def select(self, rows, extra: int = 0, spare: int = 0) -> "KVCache":
        """A new cache holding the given batch rows (int[n], repeats allowed), e.g. to branch a prefix.

        When this cache has room for ``extra`` more positions, the rows are gathered whole (one
        contiguous copy, spare room included); otherwise the filled positions are copied into arrays
        with room for ``extra + spare`` more (spare room makes the next selects whole gathers again).
        A shared prefix stays shared.
        """
        new = object.__new__(KVCache)
        rows = np.asarray(rows, dtype=np.intp)
        n = self.filled
        new.prefix, new.offset, new.filled = self.prefix, self.offset, n
        roomy = n + extra <= self.k[0].shape[2]
        new.k, new.v = [], []
        for src, dst in ((self.k, new.k), (self.v, new.v)):
            for a in src:
                if roomy:
                    dst.append(a[rows])
                else:
                    out = np.empty((len(rows), a.shape[1], n + extra + spare, a.shape[3]), dtype=a.dtype)
                    out[:, :, :n] = a[rows, :, :n]
                    dst.append(out)
        return new

    def branch(self, batch: int, capacity: int = 16) -> "KVCache":
        """An empty cache of ``batch`` rows that all continue this batch-1 cache without copying it.

        Every row sees this cache's positions first (its keys and values are shared, so they must
        not change while the branch is in use); new tokens go into the new cache's own arrays.
        Raises ValueError unless this cache holds exactly one row and has no prefix itself.
        """
        if self.batch != 1 or self.prefix is not None:
            raise ValueError("only a batch-1 cache without a shared prefix can be branched, "
                             f"this one has {self.batch} rows")
        new = object.__new__(KVCache)
        new.prefix, new.offset, new.filled = self, self.length, 0
        shape = (batch, self.k[0].shape[1], capacity, self.k[0].shape[3])
        new.k = [np.zeros(shape, dtype=a.dtype) for a in self.k]
        new.v = [np.zeros(shape, dtype=a.dtype) for a in self.v]
        return new

    def reserve(self, total: int) -> None:
        """Make room for ``total`` positions of its own (the arrays grow, doubling, when needed)."""
        capacity = self.k[0].shape[2]
        if total <= capacity:
            return
        capacity = max(total, 2 * capacity)
        for arrays in (self.k, self.v):
            for i, a in enumerate(arrays):
                grown = np.zeros(a.shape[:2] + (capacity,) + a.shape[3:], dtype=a.dtype)
                grown[:, :, :self.filled] = a[:, :, :self.filled]
                arrays[i] = grown


# In Pyodide, NumPy has no BLAS: ``einsum`` with both operands row-major is 1.5-3x faster than
# ``@`` there (measured under Node: about 5 against 1.7-3.5 GFLOP/s; see docs/lesson.md). CPython
# keeps BLAS.
USE_EINSUM = sys.platform == "emscripten"


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """x @ w.T + b. x: float[..., in]; w: float[out, in] (PyTorch's layout); b: float[out] or None."""
    flat = x.reshape(-1, x.shape[-1])
    y = np.einsum("ij,kj->ik", flat, w) if USE_EINSUM else flat @ w.T
    if b is not None:
        y += b
    return y.reshape(x.shape[:-1] + (w.shape[0],))


def _scores(q: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """q @ keys^T per row and head: float[B, h, T, hd] x float[B, h, S, hd] -> float[B, h, T, S]."""
    return np.einsum("bhtd,bhsd->bhts", q, keys) if USE_EINSUM else q @ keys.transpose(0, 1, 3, 2)


def _mix(weights: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """weights @ vals per row and head: float[B, h, T, S] x float[B, h, S, hd] -> float[B, h, T, hd]."""
    return np.einsum("bhts,bhsd->bhtd", weights, vals) if USE_EINSUM else weights @ vals


def _prefix_scores(q: np.ndarray, pk: np.ndarray) -> np.ndarray:
    """q @ pk^T with keys shared by every row: float[B, h, T, hd] x float[1, h, P, hd] -> float[B, h, T, P].

    In Pyodide, one row-major einsum per head (all rows at once) beats a broadcast matmul.
    """
    if not USE_EINSUM:
        return q @ pk.transpose(0, 1, 3, 2)
    b, h, t, hd = q.shape
    per_head = np.ascontiguousarray(q.transpose(1, 0, 2, 3)).reshape(h, b * t, hd)  # (h, B*T, hd)
    out = np.stack([np.einsum("nd,pd->np", per_head[i], pk[0, i]) for i in range(h)])  # (h, B*T, P)
    return out.reshape(h, b, t, -1).transpose(1, 0, 2, 3)


class GPT:
    """A trained GPT. ``params`` maps the names of ``config.parameter_shapes`` to arrays.

    ``dtype``: float32 (default, as trained) or float64 (used where two platforms must agree to
    more digits than float32 rounding allows, e.g. the lesson's exact enumeration).
    """

    def __init__(self, cfg: GPTConfig, params: dict, dtype=np.float32):
        self.config = cfg
        self.dtype = np.dtype(dtype)
        self.params = params
        cast = lambda a: np.ascontiguousarray(a, dtype=self.dtype)  # noqa: E731
        self.wte = cast(params["wte"])  # (V, d), also the output head
        self.wpe = cast(params["wpe"])  # (n_ctx, d)
        self.blocks = []
        for i in range(cfg.n_layer):
            p = lambda n: cast(params[f"h.{i}.{n}"])  # noqa: E731
            # Linear weights stay (out, in) as in PyTorch; see ``linear``.
            self.blocks.append({
                "ln_1": (p("ln_1.weight"), p("ln_1.bias")),
                "c_attn": (p("attn.c_attn.weight"), p("attn.c_attn.bias")),
                "attn_proj": (p("attn.c_proj.weight"), p("attn.c_proj.bias")),
                "ln_2": (p("ln_2.weight"), p("ln_2.bias")),
                "c_fc": (p("mlp.c_fc.weight"), p("mlp.c_fc.bias")),
                "mlp_proj": (p("mlp.c_proj.weight"), p("mlp.c_proj.bias")),
            })
        self.ln_f = (cast(params["ln_f.weight"]), cast(params["ln_f.bias"]))
        self._converted: dict = {}  # dtype -> GPT, filled by astype

    def astype(self, dtype) -> "GPT":
        """The same model computing in ``dtype`` (float32 or float64); self if it already does.

        The converted model is kept, so repeated calls cost nothing (it holds a second copy of the
        weights: 15 MB in float64).
        """
        dtype = np.dtype(dtype)
        if dtype == self.dtype:
            return self
        converted = self._converted.get(dtype)
        if converted is None:
            converted = self._converted[dtype] = GPT(self.config, self.params, dtype)
        return converted

    def new_cache(self, batch: int = 1) -> KVCache:
        """An empty key/value cache for ``batch`` sequences."""
        return KVCache(self.config, batch, self.dtype)

    def forward(self, ids) -> np.ndarray:
        """Logits for a batch of prefixes, computed from scratch.

        ids: int[batch, T] (or int[T], treated as batch 1), 1 <= T <= n_ctx, each id < vocab_size.
        Returns logits: float[batch, T, vocab_size] (the model's dtype). Raises ValueError on a bad
        shape or id.
        """
        ids = np.asarray(ids)
        if ids.ndim == 1:
            ids = ids[None, :]
        return self.step(ids, self.new_cache(ids.shape[0]))

    def step(self, ids, cache: KVCache) -> np.ndarray:
        """Run new tokens after what ``cache`` holds, and append their keys and values to it.

        ids: int[batch, T_new] with batch == cache.batch and cache.length + T_new <= n_ctx.
        Returns logits: float[batch, T_new, vocab_size]. Mutates ``cache``.
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
        cache.reserve(cache.filled + t)
        x = self.wte[ids] + self.wpe[start:start + t]  # (B, T, d)
        for layer, blk in enumerate(self.blocks):
            if layer == 0 and t == 1:  # rows feeding the same token share the first projections
                tokens, where = np.unique(ids[:, 0], return_inverse=True)
                first = layer_norm(self.wte[tokens] + self.wpe[start], *blk["ln_1"], cfg.layer_norm_eps)
                qkv = linear(first, *blk["c_attn"])[where.reshape(-1)][:, None, :]  # (B, 1, 3d)
            else:
                qkv = linear(layer_norm(x, *blk["ln_1"], cfg.layer_norm_eps), *blk["c_attn"])  # (B, T, 3d)
            x = x + self._attention(qkv, blk, cache, layer)
            h = layer_norm(x, *blk["ln_2"], cfg.layer_norm_eps)
            x = x + linear(gelu(linear(h, *blk["c_fc"])), *blk["mlp_proj"])
        cache.filled += t
        x = layer_norm(x, *self.ln_f, cfg.layer_norm_eps)
        return linear(x, self.wte)  # (B, T, V), head tied to the token embedding

    def _attention(self, qkv: np.ndarray, blk: dict, cache: KVCache, layer: int) -> np.ndarray:
        """Causal self-attention of the new positions, given their projections qkv: float[B, T, 3d]."""
        cfg = self.config
        b, t, d = qkv.shape[0], qkv.shape[1], cfg.n_embd
        h, hd, own = cfg.n_head, cfg.head_dim, cache.filled
        q, k, v = (qkv[..., i * d:(i + 1) * d].reshape(b, t, h, hd).transpose(0, 2, 1, 3) for i in range(3))  # (B, h, T, hd)
        cache.k[layer][:, :, own:own + t] = k
        cache.v[layer][:, :, own:own + t] = v
        keys = cache.k[layer][:, :, :own + t]  # (B, h, S, hd), S = own + T
        vals = cache.v[layer][:, :, :own + t]
        scale = self.dtype.type(1.0 / np.sqrt(hd))
        att = _scores(q, keys) * scale  # (B, h, T, S)
        if t > 1:  # query i (own position own + i) sees own keys 0 .. own + i
            future = np.arange(own + t)[None, :] > (own + np.arange(t))[:, None]  # (T, S)
            att = np.where(future, self.dtype.type(-np.inf), att)
        pre = cache.prefix
        if pre is None:
            y = _mix(softmax(att), vals)  # (B, h, T, hd)
        else:  # the shared prefix: every query sees all of it; its arrays broadcast over the batch
            pk = pre.k[layer][:, :, :pre.filled]  # (1, h, P, hd)
            pv = pre.v[layer][:, :, :pre.filled]
            att_pre = _prefix_scores(q, pk) * scale  # (B, h, T, P)
            top = np.maximum(att_pre.max(axis=-1, keepdims=True), att.max(axis=-1, keepdims=True))
            e_pre, e_own = np.exp(att_pre - top), np.exp(att - top)  # softmax over P + S keys
            total = e_pre.sum(axis=-1, keepdims=True) + e_own.sum(axis=-1, keepdims=True)
            y = (e_pre @ pv + _mix(e_own, vals)) / total  # (B, h, T, hd)
        y = y.transpose(0, 2, 1, 3).reshape(b, t, d)  # (B, T, d)
        return linear(y, *blk["attn_proj"])


def load_model(folder=None, dtype=np.float32) -> GPT:
    """The trained model from ``folder`` (default ``weights_dir()``: ``$MINIGPT_WEIGHTS`` or ``weights/``)."""
    cfg, params, _ = load_weights(folder or weights_dir())
    return GPT(cfg, params, dtype)
