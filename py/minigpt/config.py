"""The model configuration, shared by the PyTorch trainer and the NumPy forward pass."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class GPTConfig:
    """Sizes of the GPT (pre-LayerNorm transformer, learned positions, tied input/output embedding).

    vocab_size: number of token ids (256 bytes + 256 merges).
    n_ctx: longest sequence, in tokens, that the learned position table covers.
    n_layer, n_head, n_embd: depth, attention heads, residual width (``n_embd % n_head == 0``).
    dropout: used in training only.
    """

    vocab_size: int = 512
    n_ctx: int = 256
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 192
    dropout: float = 0.1
    layer_norm_eps: float = 1e-5

    def __post_init__(self):
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd={self.n_embd} must be a multiple of n_head={self.n_head}")

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "GPTConfig":
        """Build from a dict; unknown keys raise ValueError (they would mean a newer format)."""
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"unknown GPTConfig fields: {sorted(unknown)}")
        return cls(**d)


def parameter_shapes(cfg: GPTConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape, in export order. Linear weights are (out, in), as in PyTorch.

    The output head is tied to ``wte`` (no separate ``lm_head``): on a 0.5 M-token corpus sharing the
    512 x n_embd table halves the embedding parameters and regularizes the rarely seen merges.
    """
    d, v = cfg.n_embd, cfg.vocab_size
    shapes: dict[str, tuple[int, ...]] = {"wte": (v, d), "wpe": (cfg.n_ctx, d)}
    for i in range(cfg.n_layer):
        p = f"h.{i}."
        shapes.update({
            p + "ln_1.weight": (d,), p + "ln_1.bias": (d,),
            p + "attn.c_attn.weight": (3 * d, d), p + "attn.c_attn.bias": (3 * d,),
            p + "attn.c_proj.weight": (d, d), p + "attn.c_proj.bias": (d,),
            p + "ln_2.weight": (d,), p + "ln_2.bias": (d,),
            p + "mlp.c_fc.weight": (4 * d, d), p + "mlp.c_fc.bias": (4 * d,),
            p + "mlp.c_proj.weight": (d, 4 * d), p + "mlp.c_proj.bias": (d,),
        })
    shapes.update({"ln_f.weight": (d,), "ln_f.bias": (d,)})
    return shapes
