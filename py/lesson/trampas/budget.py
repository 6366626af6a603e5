"""The token budget of «Trampas y decisiones» §3, separated into its two effects.

A budget of ``k`` tokens changes the target: the answer a reader wants is drawn from
p(y | x, G, |y| <= k), the model's distribution restricted to the token paths of G with at most
``k`` tokens, and the answers that fit are those with short token paths. The budget-aware mask
(``Matcher.set_budget``, ``masker/budget.py``) is the plain mask of that restricted language, so it
distorts relative to that target as the plain mask distorts relative to p(y | x, G)
(«La máscara»; the weights of «Corregir la distorsión» correct it).

:class:`BudgetLanguage` presents "G within ``k`` tokens" as a grammar that the lesson's exact
enumeration (``lesson.enumeration.enumerate_paths``) walks; :func:`budget_split` enumerates G with
and without the budget and reports the three distributions per text.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from html import escape

from ..batch import sample_batch
from ..enumeration import enumerate_paths
from ..i18n import _
from ..numbers import fmt_decimal
from ..views import _bar, _scroll, styled


class BudgetMatcher:
    """A masker ``Matcher`` with a token budget, seen as the matcher of the restricted language.

    ``mask()`` is the budget-aware mask (bool[V]); ``state_key()`` adds the tokens left to the
    automaton's key, since two prefixes with the same automaton state but different budgets allow
    different futures. ``is_finished()`` is also True for a complete text with no token left."""

    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    @property
    def prefix_bytes(self) -> bytes:
        return self.inner.prefix_bytes

    @property
    def budget(self) -> int:
        return self.inner.budget

    def mask(self):
        return self.inner.mask()

    def consume(self, token_id: int) -> None:
        self.inner.consume(token_id)

    def fork(self) -> "BudgetMatcher":
        return BudgetMatcher(self.inner.fork())

    def is_accepting(self) -> bool:
        return self.inner.is_accepting()

    def is_finished(self) -> bool:
        return self.inner.is_finished() or (self.inner.budget == 0 and self.inner.is_accepting())

    def state_key(self):
        return (self.inner.state_key(), self.inner.budget)


@dataclass(frozen=True)
class BudgetLanguage:
    """The texts of ``grammar`` written in at most ``budget`` tokens, as a grammar for the lesson's
    walks (``count_language``, ``enumerate_paths``): ``matcher(vocab)`` is a :class:`BudgetMatcher`.
    Raises masker.BudgetTooSmall (from ``set_budget``) when no text of ``grammar`` fits."""
    grammar: object
    budget: int

    def matcher(self, vocab):
        inner = self.grammar.matcher(vocab)
        inner.set_budget(self.budget)
        return BudgetMatcher(inner)


@dataclass
class BudgetSplit:
    """Per text (``labels``, in the order of the unrestricted conditional): ``p`` = p(y | x, G),
    ``target`` = p(y | x, G, |y| <= budget) and ``masked`` = the budget-aware mask's q~(y | x)
    (floats summing to 1; a text with no path within the budget has 0)."""
    budget: int
    labels: list[str]
    p: list[float]
    target: list[float]
    masked: list[float]

    @staticmethod
    def _tv(a, b) -> float:
        return 0.5 * sum(abs(x - y) for x, y in zip(a, b))

    @property
    def tv_budget(self) -> float:
        """TV(p, target): what the budget itself changes. At most the mass p gives to the paths
        that do not fit, and equal to it when each text fits in all its paths or in none."""
        return self._tv(self.p, self.target)

    @property
    def tv_mask(self) -> float:
        """TV(target, masked): the budget-aware mask's distortion relative to its target."""
        return self._tv(self.target, self.masked)

    @property
    def tv_total(self) -> float:
        return self._tv(self.p, self.masked)

    @property
    def excluded(self) -> list[str]:
        """The texts with no token path within the budget."""
        return [g for g, t in zip(self.labels, self.target) if t == 0.0]

    def _repr_html_(self) -> str:
        rows = "".join(
            f'<tr data-text="{escape(g)}" data-p="{p!r}" data-target="{t!r}" data-masked="{q!r}">'
            f'<th scope="row">{escape(g)}</th><td>{_bar(p, fmt_decimal(p, 3))}</td>'
            f'<td>{_bar(t, fmt_decimal(t, 3))}</td><td>{_bar(q, fmt_decimal(q, 3))}</td></tr>'
            for g, p, t, q in zip(self.labels, self.p, self.target, self.masked))
        k = self.budget
        return styled(
            f'<div data-testid="budget-split" data-budget="{k}" data-tv-budget="{self.tv_budget!r}" '
            f'data-tv-mask="{self.tv_mask!r}">' + _scroll(_("los dos efectos del presupuesto"))
            + '<table class="compact-table"><caption>' + _("Tres distribuciones exactas de la respuesta")
            + '</caption><thead><tr><th scope="col">' + _("respuesta") + '</th><th scope="col">'
            f'p(y | x, G)</th><th scope="col">p(y | x, G, |y| ≤ {k})</th><th scope="col">'
            + _("q̃, máscara de {k} tokens").format(k=k)
            + f'</th></tr></thead><tbody>{rows}</tbody></table></div><p class="enum-summary">'
            + _("Distancia de variación total: el presupuesto cambia el objetivo "
                "<strong>{tv_budget}</strong> (de la primera columna a la segunda); la máscara se "
                "aparta de ese objetivo <strong>{tv_mask}</strong> (de la segunda a la tercera).").format(
                    tv_budget=fmt_decimal(self.tv_budget, 3), tv_mask=fmt_decimal(self.tv_mask, 3))
            + '</p></div>')


def budget_split(model, tok, prompt: str, grammar, budget: int, label=None) -> BudgetSplit:
    """Enumerate ``grammar`` exactly twice (``enumerate_paths``): without a budget and as
    :class:`BudgetLanguage` ``(grammar, budget)``. ``label``: text (str) -> what the table shows
    (default: the text). Raises masker.BudgetTooSmall when no text fits in ``budget`` tokens, and
    what ``enumerate_paths`` raises (an infinite or too large language)."""
    label = label or (lambda text: text)
    full = enumerate_paths(model, tok, prompt, grammar)
    within = {r.text: r for r in enumerate_paths(model, tok, prompt, BudgetLanguage(grammar, budget)).rows}
    rows = full.rows
    return BudgetSplit(budget, [label(r.text.decode("utf-8")) for r in rows],
                       [r.conditional for r in rows],
                       [within[r.text].conditional if r.text in within else 0.0 for r in rows],
                       [within[r.text].masked if r.text in within else 0.0 for r in rows])


@dataclass
class BudgetSweep:
    """Per budget (tokens, ascending): ``valid_cut`` and ``valid_aware``, the shares (0 to 1) of
    valid answers when the budget cuts and with the budget-aware mask, and ``name_aware``, the
    mean characters of the name in the budget-aware answers; ``name_free``: the same without a
    budget; ``n`` answers per batch, one seed for all."""
    budgets: list[int]
    valid_cut: list[float]
    valid_aware: list[float]
    name_aware: list[float]
    name_free: float
    n: int


def budget_sweep(model, tok, prompt: str, grammar, budgets, *, n: int = 40, seed: int = 0,
                 name=lambda text: json.loads(text)["nombre"]) -> BudgetSweep:
    """For each budget, ``n`` answers cut at the budget and ``n`` with ``budget_aware=True``
    (``sample_batch``, same seed), and ``n`` without a budget. ``name``: text -> the string
    whose length is measured. Raises ValueError for an empty or unsorted ``budgets``, and
    masker.BudgetTooSmall for a budget below the shortest valid answer."""
    budgets = list(budgets)
    if not budgets or budgets != sorted(set(budgets)):
        raise ValueError(f"budgets must be distinct token counts in ascending order, found {budgets}")

    def valid(gens):
        return [g for g in gens if grammar.accepts(g.bytes)]

    def name_length(gens) -> float:
        names = [len(name(g.text)) for g in valid(gens)]
        return sum(names) / len(names) if names else math.nan

    free = sample_batch(model, tok, prompt, grammar, n=n, seed=seed)
    cut, aware, lengths = [], [], []
    for k in budgets:
        plain = sample_batch(model, tok, prompt, grammar, n=n, seed=seed, max_tokens=k)
        masked = sample_batch(model, tok, prompt, grammar, n=n, seed=seed, max_tokens=k,
                              budget_aware=True)
        cut.append(len(valid(plain)) / n)
        aware.append(len(valid(masked)) / n)
        lengths.append(name_length(masked))
    return BudgetSweep(budgets, cut, aware, lengths, name_length(free), n)
