"""The «Laboratorio»'s tree of branches: what each branch is, the tokens a position offers, and the
tree written as a short text for the page's address.

A branch is a :class:`~lesson.sampling.Decoder`; every branch but the first left its parent at a
position with a token the reader chose there (``Decoder.fork_at``). Since a token given as a pick
draws no random number and a fork starts the seed's generator again, a branch is fixed by where it
left its parent, the reader's later picks and how far it went: :func:`encode_tree` writes exactly
that, and :func:`replay` rebuilds the same branches from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..i18n import _, ngettext
from ..token_language import allowed_ids
from ..numbers import fmt_int
from ..sampling import BUDGET, Decoder, truncate
from .words import count

MAX_BRANCHES = 16


@dataclass
class Branch:
    """One branch of the tree.

    decoder: its decode loop (``decoder.generation`` is its text so far). parent: the index of the
    branch it left (None for the first); start: the 1-based position at which it left it (its
    token there is the reader's), None for the first. picks: position -> token id, the reader's
    later choices on this branch. stopped: the reader stopped it before the end.
    """
    decoder: Decoder
    parent: int | None = None
    start: int | None = None
    start_token: int | None = None
    picks: dict[int, int] = field(default_factory=dict)
    stopped: bool = False

    @property
    def state(self) -> str:
        """As ``lab-output``'s data-state: "done" when finished, "idle" while it can go on."""
        return "done" if self.decoder.done else "idle"

    def status(self, accepted: bool) -> str:
        """Its status as a code: "stopped", "running", "budget", "valid" or "invalid"."""
        if self.stopped and not self.decoder.done:
            return "stopped"
        if not self.decoder.done:
            return "running"
        if self.decoder.generation.status == BUDGET:
            return "budget"
        return "valid" if accepted else "invalid"

    def state_words(self, accepted: bool) -> str:
        """Its status in words (current language): válida / no válida, cortada por el presupuesto,
        en curso, detenida."""
        return STATUS_WORDS[self.status(accepted)]()


# a branch's status code -> its words, in the current language (called when shown)
STATUS_WORDS = {"stopped": lambda: _("detenida"), "running": lambda: _("en curso"),
                "budget": lambda: _("cortada por el presupuesto"), "valid": lambda: _("válida"),
                "invalid": lambda: _("no válida"), "finished": lambda: _("terminada")}


def offered(p: np.ndarray, matcher, top_k: int | None, top_p: float | None) -> list[tuple[int, float, float]]:
    """The tokens the settings let the loop draw at one position, as (token id, p, q̃), q̃ highest
    first (ties by id): exactly those with q̃ > 0, where q̃ is what ``sampling.choose`` draws from
    (mask, renormalise, then top-k / top-p among the allowed tokens).

    p: float64[V], the tempered distribution p_T(. | x, y_<j) (temperature in, no top-k / top-p);
    matcher: the masker Matcher at the prefix, or None (no mask)."""
    ids = np.arange(len(p)) if matcher is None else allowed_ids(matcher)
    q = np.zeros_like(p)
    q[ids] = p[ids] / p[ids].sum()
    q = truncate(q, ids, top_k, top_p)
    kept = ids[q[ids] > 0]
    kept = kept[np.argsort(-q[kept], kind="stable")]
    return [(int(t), float(p[t]), float(q[t])) for t in kept]


def offered_at(decoder: Decoder, position: int) -> list[tuple[int, float, float]]:
    """:func:`offered` at a 1-based position of the decoder's generation: a past one (from its
    ``Position`` record, no model call) or the next one while not done. ValueError otherwise."""
    gen = decoder.generation
    n = len(gen.token_ids)
    if 1 <= position <= n:
        pos = gen.positions[position - 1]
        if pos.allowed is not None:
            return [(t, p, q) for t, p, q in pos.allowed if q > 0]
        return offered(pos.probs, None, decoder.top_k, decoder.top_p)
    if position == n + 1 and not decoder.done:
        return offered(decoder.next_distribution(), decoder.matcher, decoder.top_k, decoder.top_p)
    shown = str(position).replace("-", "\u2212")
    tokens = count(ngettext("{n} token", "{n} tokens", n), n)
    if decoder.done:
        raise ValueError(_("la posición {position} no existe en esta rama (tiene {tokens})").format(
            position=shown, tokens=tokens))
    raise ValueError(_("la posición {position} no existe en esta rama (tiene {tokens}; la siguiente es la "
                       "{next})").format(position=shown, tokens=tokens, next=fmt_int(n + 1)))


# The tree as text, with only the characters an address keeps as they are (letters, digits, . - _):
# branches joined by "_"; a branch is "r" (the first) or "parent.start.token", then "-pos.token" for
# each later pick, "-nLEN" when it stopped before the end (LEN tokens) and "-s" when it was stopped.
_BRANCH = re.compile(r"(r|\d+\.\d+\.\d+)((?:-\d+\.\d+)*)(-n\d+)?(-s)?")


def encode_tree(branches: list[Branch]) -> str:
    """The tree as a short text (about 10 characters a branch, plus 6 a pick): see the module."""
    out = []
    for b in branches:
        text = "r" if b.parent is None else f"{b.parent}.{b.start}.{b.start_token}"
        text += "".join(f"-{j}.{t}" for j, t in sorted(b.picks.items()))
        if not b.decoder.done:
            text += f"-n{len(b.decoder.generation.token_ids)}"
        out.append(text + ("-s" if b.stopped else ""))
    return "_".join(out)


def decode_tree(text: str) -> list[dict]:
    """The branch specifications of :func:`encode_tree`'s text, in order: dicts with parent,
    start, start_token, picks, length (None: to the end) and stopped. ValueError (current language)
    for a malformed text, a parent that does not come first, or more than MAX_BRANCHES."""
    specs = []
    for i, part in enumerate(text.split("_") if text else []):
        match = _BRANCH.fullmatch(part)
        if match is None:
            raise ValueError(_("la rama {i} del enlace no se entiende: «{part}»").format(i=i + 1, part=part))
        head, picks, length, stopped = match.groups()
        spec = {"parent": None, "start": None, "start_token": None, "stopped": bool(stopped),
                "length": int(length[2:]) if length else None,
                "picks": {int(j): int(t) for j, t in re.findall(r"-(\d+)\.(\d+)", picks)}}
        if head != "r":
            spec["parent"], spec["start"], spec["start_token"] = map(int, head.split("."))
            if spec["parent"] >= i:
                raise ValueError(_("la rama {i} del enlace sale de una rama que no la precede").format(i=i + 1))
        elif i:
            raise ValueError(_("solo la primera rama del enlace empieza en el prompt"))
        specs.append(spec)
    if len(specs) > MAX_BRANCHES:
        raise ValueError(_("el enlace tiene {n} ramas; el laboratorio guarda {most} como mucho").format(
            n=len(specs), most=MAX_BRANCHES))
    return specs


def take(decoder: Decoder, token_id: int | None = None) -> None:
    """One step of the decoder: sampled, or ``token_id`` when it is one of the tokens the settings
    offer at the next position (q̃ > 0; ValueError, in the current language, otherwise)."""
    if token_id is not None:
        position = len(decoder.generation.token_ids) + 1
        if token_id not in {t for t, _, _ in offered_at(decoder, position)}:
            raise ValueError(_("el token {token} no está entre los que los ajustes permiten en la "
                               "posición {position} (q̃ = 0)").format(token=token_id, position=position))
    decoder.step(token_id=token_id)


def advance(branch: Branch, length: int | None = None) -> Branch:
    """Step the branch to its end, or until it has ``length`` tokens, taking its picks where it
    has them (a pick draws no random number)."""
    decoder = branch.decoder
    while not decoder.done and (length is None or len(decoder.generation.token_ids) < length):
        take(decoder, branch.picks.get(len(decoder.generation.token_ids) + 1))
    return branch


def replay(first: Decoder, specs: list[dict]) -> list[Branch]:
    """The branches of :func:`decode_tree`'s specifications, rebuilt: the first from ``first``
    (a fresh decoder), each other as a fork of its parent. ValueError (current language) when a spec does
    not fit (a position its parent lacks, a token the settings do not offer there)."""
    branches: list[Branch] = []
    for i, spec in enumerate(specs or [{"parent": None, "start": None, "start_token": None, "picks": {},
                                        "length": None, "stopped": False}]):
        if spec["parent"] is None:
            decoder = first
        else:
            parent = branches[spec["parent"]].decoder
            n = len(parent.generation.token_ids)
            if not 1 <= spec["start"] <= n + (0 if parent.done else 1):
                raise ValueError(_("la rama {i} sale de la rama {parent} en la posición {start}, pero esa rama "
                                   "tiene {tokens}").format(i=i + 1, parent=spec["parent"] + 1,
                                                            start=fmt_int(spec["start"]),
                                                            tokens=count(ngettext("{n} token", "{n} tokens", n), n)))
            decoder = parent.fork_at(spec["start"])
            take(decoder, spec["start_token"])
        branch = Branch(decoder, spec["parent"], spec["start"], spec["start_token"], dict(spec["picks"]),
                        spec["stopped"])
        branches.append(advance(branch, spec["length"]))
    return branches
