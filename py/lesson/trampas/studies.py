"""The measurements of the lesson «Trampas y decisiones», each with its view.

Every function drives the mini-GPT and the masker through the lesson API (``sample_batch``,
``enumerate_paths``, ``Decoder``, ``Matcher``), so a page cell, the build's prose figures and the
tests compute the same numbers. The results render as HTML (``_repr_html_``) with stable test hooks:

- :func:`age_study`: a schema forces an integer age; what the model puts there.
- :func:`field_order`: the same two fields in either order, enumerated exactly, as the
  conditional p(answer | x, G) and as the mask's q~; ``[data-testid=field-order]`` carries
  ``data-tv`` and ``data-tv-exact`` (total variation distance between the two orders' answer
  distributions under the mask and under the conditional) and one
  ``td[data-order][data-name][data-kind]`` per order, kind and answer, with ``data-q`` (mask) or
  ``data-p`` (conditional).
- :func:`budget_demo`: a token budget that truncates against budget-aware masks;
  ``[data-testid=budget-demo]`` carries ``data-budget``, ``data-n``, ``data-valid-plain`` and
  ``data-valid-aware`` (shares of valid answers, Python ``repr`` of the float).
- :func:`date_study`: a date pattern with and without a ``null`` way out.
- :func:`enum_scaling`: compile and mask time against the size of an enum;
  ``[data-testid=enum-scaling]`` has one ``tr`` per size with ``data-size``, ``data-compile-ms``
  and ``data-mask-us``.
- :func:`depth_bounded`: a recursive schema flattened to a depth bound, DFA states per bound.
"""

from __future__ import annotations

import datetime
import json
import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from html import escape

import numpy as np

from masker import compile_choice, compile_json_schema
from masker.dfa import DEFAULT_MAX_DFA_STATES, Dfa
from masker.errors import LimitExceeded

from ..batch import sample_batch
from ..course import PROMPT
from ..enumeration import enumerate_paths
from ..i18n import _
from ..numbers import fmt_decimal, fmt_int, fmt_percent, fmt_prob, fmt_sci, fmt_sci_log
from ..sampling import Decoder
from ..views import _bar, _scroll, styled


def _cols(*labels: str) -> str:
    """A table head's cells, one ``<th scope="col">`` per label."""
    return "".join(f'<th scope="col">{label}</th>' for label in labels)


def _mean(x: float, digits: int = 1) -> str:
    """A mean for the views: "—" when there was nothing to average (nan)."""
    return "—" if not math.isfinite(x) else fmt_decimal(x, digits)

# -- 1. Format is not content ----------------------------------------------------------------------
AGE_PROMPT = "¿Qué edad tiene Benina? Responde en JSON.\n"
AGE_SCHEMA = {"type": "object",
              "properties": {"nombre": {"const": "Benina"},
                             "edad": {"type": "integer", "minimum": 0, "maximum": 120}},
              "required": ["nombre", "edad"], "additionalProperties": False}


@dataclass
class AgeStudy:
    """Ages the masked model writes for one character: ``ages`` (int per sample, in sample
    order), ``n``, and ``rule_ok`` (how many pass the business rule ``lo <= edad <= hi``)."""
    ages: list[int]
    texts: list[str]
    rule: tuple[int, int]
    accepted: list[bool] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.ages)

    @property
    def counts(self) -> list[tuple[int, int]]:
        """(age, samples), most frequent first (ties: smaller age first)."""
        return sorted(Counter(self.ages).items(), key=lambda kv: (-kv[1], kv[0]))

    @property
    def valid(self) -> int:
        """How many answers are complete texts of the schema (``grammar.accepts``)."""
        return sum(self.accepted)

    @property
    def rule_ok(self) -> int:
        lo, hi = self.rule
        return sum(lo <= a <= hi for a in self.ages)

    def _valid_words(self) -> str:
        if self.accepted and self.valid == self.n:
            return _("todas JSON válido")
        return _("{valid} de ellas JSON válido").format(valid=self.valid) if self.accepted else "JSON"

    def _repr_html_(self) -> str:
        top = self.counts[:12]
        n = max(self.n, 1)
        rows = "".join(f'<tr data-age="{a}" data-count="{c}"><td class="num">{fmt_int(a)}</td>'
                       f'<td>{_bar(c / n, f"{c} ({fmt_percent(c / n)})")}</td></tr>'
                       for a, c in top)
        lo, hi = self.rule
        return styled(
            f'<p class="enum-summary" data-testid="age-study" data-n="{self.n}" '
            f'data-distinct="{len(self.counts)}" data-rule-ok="{self.rule_ok}">'
            + _("{n} respuestas, {valid} con una edad entera; {distinct} edades distintas. Cumplen "
                "la regla de negocio {lo} ≤ edad ≤ {hi}: {ok} de {n}.").format(
                    n=self.n, valid=self._valid_words(), distinct=len(self.counts), lo=lo, hi=hi,
                    ok=self.rule_ok)
            + '</p>' + _scroll(_("edades más frecuentes")) + '<table class="compact-table"><caption>'
            + _("Las edades más frecuentes") + '</caption><thead><tr>' + _cols(_("edad"), _("respuestas"))
            + f'</tr></thead><tbody>{rows}</tbody></table></div>')


def age_study(model, tok, *, n: int = 60, seed: int = 0, rule: tuple[int, int] = (18, 100),
              prompt: str = AGE_PROMPT, schema: dict = AGE_SCHEMA) -> AgeStudy:
    """``n`` masked answers (``sample_batch``, one seed for the batch) and the integer each puts
    in ``edad``. ``rule``: the application's own check, inclusive bounds in years. Raises
    ValueError for ``rule`` with lo > hi, and what ``sample_batch`` raises (n < 1...)."""
    if rule[0] > rule[1]:
        raise ValueError(f"rule must be (lo, hi) with lo <= hi, found {tuple(rule)}")
    grammar = compile_json_schema(schema)
    gens = sample_batch(model, tok, prompt, grammar, n=n, seed=seed)
    return AgeStudy([json.loads(g.text)["edad"] for g in gens], [g.text for g in gens], rule,
                    [grammar.accepts(g.bytes) for g in gens])


AGE_PREFIX = '{"nombre":"Benina","edad":'  # what AGE_SCHEMA forces before the age


@dataclass
class DashToZero:
    """:func:`dash_to_zero`'s figures (``data``) and the line the cell «edades» prints with them."""
    data: dict

    def _repr_html_(self) -> str:
        d, qs = self.data, self.data["samples_q_minus"]
        text = _("Primera posición de la edad, tras el prefijo partido por el tokenizador: q̃ del guion {q_minus}, "
                 "del cero {q_zero}; en las {n} respuestas ({splits} particiones del prefijo), q̃ del guion "
                 "de {lo} a {hi}, {mean} de media; tras el guion, el modelo daba al cero {p_zero}; "
                 "escriben -0 {minus_zero} de {n}.").format(
            q_minus=fmt_decimal(d["q_minus"], 3), q_zero=fmt_decimal(d["q_zero"], 3), n=fmt_int(qs["n"]),
            splits=fmt_int(qs["splits"]), lo=fmt_decimal(qs["min"], 3), hi=fmt_decimal(qs["max"], 3),
            mean=fmt_decimal(qs["mean"], 3), p_zero=fmt_sci(d["p_zero_after_minus"], 2),
            minus_zero=fmt_int(d["minus_zero"]))
        return styled(f'<p class="enum-summary" data-testid="dash-to-zero">{text}</p>')


def dash_to_zero(model, tok, *, n: int = 60, seed: int = 0, prompt: str = AGE_PROMPT,
                 schema: dict = AGE_SCHEMA) -> DashToZero:
    """Where the «-0» ages come from: after ``prompt`` and the forced AGE_PREFIX (in the
    tokenizer's split), the model's p and the mask's q~ of the minus sign ``-`` and of the digit
    ``0`` (the first value position), whether ``-`` is the most probable allowed token, the
    tokens the mask allows after ``-`` (``after_minus``: their labels) and the model's p of
    ``0`` there; ``samples_q_minus``: the mask's q~ of ``-`` at the same position in the ``n``
    samples of :func:`age_study` (same seed), each with the prefix split as it split it (min,
    max, mean per sample, n, and how many distinct splits); ``minus_zero``: how many of them
    write ``-0``. Raises KeyError if ``-`` or ``0`` is not a token."""
    from ..views import token_label
    grammar = compile_json_schema(schema)
    ids = tok.encode(prompt + AGE_PREFIX)
    minus, zero = tok.vocab.index(b"-"), tok.vocab.index(b"0")

    def probs(context):
        logits = model.forward(np.array([context]))[0, -1].astype(np.float64)
        p = np.exp(logits - logits.max())
        return p / p.sum()
    m = grammar.matcher(tok.vocab)
    m.consume_bytes(AGE_PREFIX)
    p, allowed = probs(ids), m.mask()
    kept = float(p[allowed].sum())
    m.consume(minus)
    after = m.mask()
    p_after = probs(ids + [minus])
    # the same position in the samples: the forced prefix split as each sample split it
    gens = sample_batch(model, tok, prompt, grammar, n=n, seed=seed)
    prompt_ids, q_samples, splits = tok.encode(prompt), [], set()
    for g in gens:
        written, k = b"", 0
        while written != AGE_PREFIX.encode():
            written += tok.vocab[g.token_ids[k]]
            k += 1
        split = tuple(g.token_ids[:k])
        splits.add(split)
        p_here = probs(prompt_ids + list(split))
        q_samples.append(float(p_here[minus]) / float(p_here[allowed].sum()))
    return DashToZero({
        "samples_q_minus": {"min": min(q_samples), "max": max(q_samples), "mean": sum(q_samples) / len(q_samples),
                            "n": len(q_samples), "splits": len(splits)},
        "minus_zero": sum('"edad":-0' in g.text for g in gens),
        "p_minus": float(p[minus]), "q_minus": float(p[minus]) / kept, "p_zero": float(p[zero]),
        "q_zero": float(p[zero]) / kept, "minus_is_top_allowed": int(np.argmax(np.where(allowed, p, -1))) == minus,
        "after_minus": [token_label(tok.vocab[t]) for t in np.flatnonzero(after)],
        "p_zero_after_minus": float(p_after[zero])})


# -- 2. Field order ------------------------------------------------------------------------------
ORDER_PROMPT = "¿A quién viste en la puerta? Responde en JSON.\n"
ORDER_NAMES = ["Ana", "Juan", "Luis"]
ORDER_HINTS = [f"a {n}" for n in ORDER_NAMES]  # short: each token split multiplies the paths
ORDER_KEYS = ("pista", "es")  # short keys: each token split of a key multiplies the token paths


def order_schema(hint_first: bool, hints=ORDER_HINTS, names=ORDER_NAMES, keys=ORDER_KEYS) -> dict:
    """The two-field schema with the hint before the answer (``hint_first``) or after it."""
    hint, ans = keys
    props = {hint: {"enum": list(hints)}, ans: {"enum": list(names)}}
    order = (hint, ans) if hint_first else (ans, hint)
    return {"type": "object", "properties": {k: props[k] for k in order}, "required": list(order),
            "additionalProperties": False}


def total_variation(a: dict, b: dict) -> float:
    """Total variation distance between two distributions over the same outcomes (dicts
    outcome -> probability; a missing outcome counts 0): half the sum of the absolute
    differences, the largest difference of probability the two give to any one set of outcomes."""
    return 0.5 * sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))


@dataclass
class FieldOrder:
    """The exact distributions of both orders, each as the model's conditional p(· | x, G)
    (``exact``) and as the mask's q~ (``masked``). ``joint[kind][order][(hint, answer)]`` and
    ``answers[kind][order][answer]`` sum to 1 per kind and order; kinds are ``"exact"`` and
    ``"masked"``, orders "pista primero" and "respuesta primero". ``tv(kind)``: total variation
    distance between the two orders' answer distributions; ``distortion(order)``: between the
    mask's and the conditional's answer distributions in one order; ``agree[kind][order]``: the
    probability of an answer that names the person of the hint."""
    names: list[str]
    hints: list[str]
    joint: dict
    answers: dict
    positions: dict

    ORDERS = ("pista primero", "respuesta primero")
    KINDS = ("exact", "masked")

    @staticmethod
    def order_label(order: str) -> str:
        """An order's name (one of ``ORDERS``, the data's keys) in the current language."""
        return {"pista primero": _("pista primero"),
                "respuesta primero": _("respuesta primero")}.get(order, order)

    def tv(self, kind: str = "masked") -> float:
        return total_variation(*(self.answers[kind][o] for o in self.ORDERS))

    def distortion(self, order: str) -> float:
        return total_variation(self.answers["exact"][order], self.answers["masked"][order])

    @property
    def agree(self) -> dict:
        return {k: {o: sum(self.joint[k][o][(h, n)] for h, n in zip(self.hints, self.names))
                    for o in self.ORDERS} for k in self.KINDS}

    def follows(self, order: str, kind: str = "masked") -> dict:
        """P(answer | hint) under ``order``: {hint: {answer: probability}}."""
        out = {}
        for h in self.hints:
            total = sum(self.joint[kind][order][(h, n)] for n in self.names)
            out[h] = {n: self.joint[kind][order][(h, n)] / total for n in self.names}
        return out

    def follows_other(self, order: str, kind: str = "masked") -> dict:
        """P(answer = names[i] | a hint other than hints[i]) under ``order``: {name: probability},
        the other hints pooled with their own probabilities. With one hint there is no other hint:
        raises ValueError."""
        if len(self.hints) < 2:
            raise ValueError("with a single hint there is no other hint to compare with")
        joint = self.joint[kind][order]
        out = {}
        for h, n in zip(self.hints, self.names):
            others = [x for x in self.hints if x != h]
            mass = sum(joint[(x, m)] for x in others for m in self.names)
            out[n] = sum(joint[(x, n)] for x in others) / mass
        return out

    def _repr_html_(self) -> str:
        return styled(
            f'<div data-testid="field-order" data-tv="{self.tv("masked")!r}" '
            f'data-tv-exact="{self.tv("exact")!r}">' + _scroll(_("respuesta según el orden de los campos"))
            + self._table() + '</div>' + self._summary() + '</div>')

    def _table(self) -> str:
        head = "".join(f'<th scope="col">{escape(self.order_label(o))}: {label}</th>' for o in self.ORDERS
                       for label in ("p", "q̃"))
        rows = []
        for name in self.names:
            cells = "".join(
                f'<td data-order="{escape(o)}" data-name="{escape(name)}" data-kind="{k}" '
                f'data-{"p" if k == "exact" else "q"}="{self.answers[k][o][name]!r}">'
                f'{_bar(self.answers[k][o][name], fmt_decimal(self.answers[k][o][name], 3))}</td>'
                for o in self.ORDERS for k in self.KINDS)
            rows.append(f'<tr><th scope="row">{escape(name)}</th>{cells}</tr>')
        agree = "".join(f'<td>{fmt_decimal(self.agree[k][o], 3)}</td>'
                        for o in self.ORDERS for k in self.KINDS)
        return ('<table class="compact-table"><caption>'
                + _("Distribución exacta de la respuesta en cada orden: la condicionada "
                    "p(respuesta | x, G) y la de la máscara, q̃(respuesta | x)")
                + '</caption><thead><tr>' + _cols(_("respuesta")) + f'{head}</tr></thead><tbody>'
                f'{"".join(rows)}</tbody><tfoot><tr><th scope="row">'
                + _("respuesta = nombre de la pista") + f'</th>{agree}</tr></tfoot></table>')

    def _summary(self) -> str:
        parts = [_("entre los dos órdenes, <strong>{exact}</strong> con la condicionada y "
                   "<strong>{masked}</strong> con la máscara").format(
                       exact=fmt_decimal(self.tv("exact"), 3), masked=fmt_decimal(self.tv("masked"), 3))]
        parts += [_("entre la máscara y la condicionada, {tv} ({order})").format(
                      tv=fmt_decimal(self.distortion(o), 3), order=escape(self.order_label(o)))
                  for o in self.ORDERS]
        follow = self.follows(self.ORDERS[0], "exact")
        other = self.follows_other(self.ORDERS[0], "exact") if len(self.hints) > 1 else {}
        said = " · ".join(_("tras «{hint}»: {name} {p}").format(
                              hint=escape(h), name=escape(n), p=fmt_decimal(follow[h][n], 4))
                          + (_(" (tras otra pista, {other}; ×{ratio})").format(
                              other=fmt_decimal(other[n], 4), ratio=fmt_decimal(follow[h][n] / other[n], 1))
                             if other.get(n) else "")
                          for h, n in zip(self.hints, self.names))
        return ('<p class="enum-summary">'
                + _("Distancia de variación total: {parts}. Probabilidad condicionada de que la "
                    "respuesta repita el nombre de la pista, fijada la pista ({order}): {said}.").format(
                        parts="; ".join(parts), order=escape(self.order_label(self.ORDERS[0])), said=said)
                + '</p>')


def field_order(model, tok, *, prompt: str = ORDER_PROMPT, names=ORDER_NAMES, hints=ORDER_HINTS,
                keys=ORDER_KEYS) -> FieldOrder:
    """Enumerate both orders exactly (``enumerate_paths``) and sum, per (hint, answer), the
    conditional p(· | x, G) and the mask's q~ of its texts. ``hints[i]`` mentions ``names[i]``.
    Raises ValueError unless names and hints are non-empty lists of the same length, and what
    ``enumerate_paths`` raises (an enumeration too large)."""
    if not names or len(names) != len(hints):
        raise ValueError(f"names and hints must be non-empty and of the same length (hints[i] "
                         f"names names[i]), found {len(names)} names and {len(hints)} hints")
    joint = {k: {} for k in FieldOrder.KINDS}
    answers = {k: {} for k in FieldOrder.KINDS}
    positions = {}
    for order, hint_first in zip(FieldOrder.ORDERS, (True, False)):
        grammar = compile_json_schema(order_schema(hint_first, hints, names, keys))
        result = enumerate_paths(model, tok, prompt, grammar)
        for kind in FieldOrder.KINDS:
            j = {(h, n): 0.0 for h in hints for n in names}
            for row in result.rows:
                obj = json.loads(row.text)
                j[(obj[keys[0]], obj[keys[1]])] += row.conditional if kind == "exact" else row.masked
            joint[kind][order] = j
            answers[kind][order] = {n: sum(j[(h, n)] for h in hints) for n in names}
        positions[order] = result.forward_rows
    return FieldOrder(list(names), list(hints), joint, answers, positions)


def order_texts(hint_first: bool, hint: str, name: str, keys=ORDER_KEYS) -> tuple[str, str]:
    """The compact text of one (hint, answer) pair in one order, and its prefix up to and including
    the answer's value (its closing quote excluded): ``(prefix, full)``."""
    h, a = keys
    if hint_first:
        prefix = f'{{"{h}":"{hint}","{a}":"{name}'
        return prefix, prefix + '"}'
    prefix = f'{{"{a}":"{name}'
    return prefix, prefix + f'","{h}":"{hint}"}}'


@dataclass
class OrderFactors:
    """Why the order moves the answer, in numbers. In each order, the exact p(r | x, G) of an
    answer r is proportional to Σ_h p(full text of (h, r) | x), and that sum splits into two
    factors: ``upto[order][r]``, Σ_h p(text up to and including r | x) (what comes before the
    answer, the hint included when it goes first, and the answer's own tokens), and
    ``after[order][r]``, the forced text after r given that prefix (its closing quote and, with the
    answer first, the hint; the sum of the full texts divided by ``upto``). Each text's
    probability sums all its token paths (``enumerate_paths``); the quote is a token of its own in
    this vocabulary, so every path of a full text passes through its prefix. Values are natural
    logs (``log_upto``, ``log_after``) because they are far below 1e-100. ``pair``: the two
    answers the page compares (``a`` first), with the odds a:b in each order split into the two
    factors' ratios."""
    names: list[str]
    log_upto: dict
    log_after: dict
    pair: tuple[str, str]
    log_quote: dict = field(default_factory=dict)  # [order][r]: ln p(the closing quote | prefix)

    ORDERS = FieldOrder.ORDERS

    def conditional(self, order: str) -> dict:
        logs = {r: self.log_upto[order][r] + self.log_after[order][r] for r in self.names}
        top = max(logs.values())
        total = sum(math.exp(v - top) for v in logs.values())
        return {r: math.exp(v - top) / total for r, v in logs.items()}

    def ratios(self, order: str) -> dict:
        """For ``pair`` (a, b) in ``order``: ``upto`` = upto(a) / upto(b), ``after`` likewise, and
        ``odds`` = their product, p(a | x, G) / p(b | x, G)."""
        a, b = self.pair
        upto = math.exp(self.log_upto[order][a] - self.log_upto[order][b])
        after = math.exp(self.log_after[order][a] - self.log_after[order][b])
        return {"upto": upto, "after": after, "odds": upto * after}

    def change(self) -> dict:
        """How the odds a:b change from the second order to the first (first / second), as the
        product of the change in ``upto`` and the change in ``after``; with ``log_quote``, the
        change in ``after`` split into the closing quote's (``quote``) and the rest's (``rest``)."""
        first, second = (self.ratios(o) for o in self.ORDERS)
        out = {k: first[k] / second[k] for k in ("upto", "after", "odds")}
        if self.log_quote:
            a, b = self.pair
            q = [math.exp(self.log_quote[o][a] - self.log_quote[o][b]) for o in self.ORDERS]
            out["quote"] = q[0] / q[1]
            out["rest"] = out["after"] / out["quote"]
            out["quote_ratios"] = q
        return out

    def _repr_html_(self) -> str:
        def sci_log(ln: float) -> str:
            return fmt_sci_log(ln, 3)
        rows = []
        for o in self.ORDERS:
            cond = self.conditional(o)
            for k, r in enumerate(self.names):
                label = f'<th scope="row" rowspan="{len(self.names)}">{escape(FieldOrder.order_label(o))}</th>' if k == 0 else ""
                rows.append(f'<tr data-order="{escape(o)}" data-name="{escape(r)}">{label}<td>{escape(r)}</td>'
                            f'<td class="num">{sci_log(self.log_upto[o][r])}</td>'
                            f'<td class="num">{sci_log(self.log_after[o][r])}</td>'
                            f'<td class="num">{fmt_prob(cond[r], 3)}</td></tr>')
        a, b = self.pair
        lines = []
        for o in self.ORDERS:
            x = self.ratios(o)
            lines.append(_("{order}: {a} frente a {b}, {odds} = {upto} (hasta la respuesta) × {after} (lo que sigue)").format(
                order=escape(FieldOrder.order_label(o)), a=escape(a), b=escape(b), odds=fmt_sig(x["odds"]),
                upto=fmt_sig(x["upto"]), after=fmt_sig(x["after"])))
        c = self.change()
        lines.append(_("de un orden a otro, la razón {a}:{b} se multiplica por {odds} = {upto} (hasta la "
                       "respuesta) × {after} (lo que sigue)").format(a=escape(a), b=escape(b), odds=fmt_sig(c["odds"]),
                                                          upto=fmt_sig(c["upto"]), after=fmt_sig(c["after"])))
        if "quote" in c:
            lines.append(_("lo que sigue, partido: la comilla que cierra el nombre, {a}:{b} = {q1} y {q2} (×{quote} de "
                           "un orden a otro), y el resto (×{rest})").format(
                a=escape(a), b=escape(b), q1=fmt_sig(c["quote_ratios"][0]), q2=fmt_sig(c["quote_ratios"][1]),
                quote=fmt_sig(c["quote"]), rest=fmt_sig(c["rest"])))
        heads = (_("orden"), _("respuesta"), _("hasta la respuesta, incluida"), _("lo que sigue, forzado"),
                 _("condicionada"))
        return styled(
            '<div data-testid="order-factors">' + _scroll(_("los dos factores de cada respuesta"))
            + '<table class="compact-table"><caption>'
            + _("Cada respuesta, partida en dos factores: p(r | x, G) es proporcional a su producto")
            + "</caption><thead><tr>" + "".join(f'<th scope="col">{h}</th>' for h in heads)
            + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>"
            + '<p class="enum-summary">' + "<br>".join(lines) + "</p></div>")


def fmt_sig(x: float) -> str:
    """A ratio to three significant figures, in the page's language (decimal or scientific)."""
    if 0.01 <= abs(x) < 1000:
        digits = max(0, 2 - int(math.floor(math.log10(abs(x)))))
        return fmt_decimal(x, digits)
    return fmt_sci(x, 3)


def order_factors(model, tok, *, prompt: str = ORDER_PROMPT, names=ORDER_NAMES, hints=ORDER_HINTS,
                  keys=ORDER_KEYS, pair: tuple[str, str] | None = None) -> OrderFactors:
    """:class:`OrderFactors` for both orders: four exact enumerations (``enumerate_paths``), the
    prefixes and the full texts of each order. ``pair`` defaults to the most probable answer
    with the hint first and the most probable one with the answer first (the first two names
    if they are the same). Raises ValueError as :func:`field_order`."""
    if not names or len(names) != len(hints):
        raise ValueError(f"names and hints must be non-empty and of the same length (hints[i] "
                         f"names names[i]), found {len(names)} names and {len(hints)} hints")
    log_upto, log_after, log_quote = {}, {}, {}
    for order, hint_first in zip(FieldOrder.ORDERS, (True, False)):
        texts = {(h, r): order_texts(hint_first, h, r, keys) for h in hints for r in names}
        pre = enumerate_paths(model, tok, prompt, compile_choice(sorted({t[0] for t in texts.values()})))
        full = enumerate_paths(model, tok, prompt, compile_choice(sorted({t[1] for t in texts.values()})))
        quoted = enumerate_paths(model, tok, prompt, compile_choice(sorted({t[0] + '"' for t in texts.values()})))
        log_upto[order], log_after[order], log_quote[order] = {}, {}, {}
        for r in names:
            prefixes = sorted({texts[(h, r)][0] for h in hints})
            up = float(np.logaddexp.reduce([pre.row(t).log_p for t in prefixes]))
            whole = float(np.logaddexp.reduce([full.row(texts[(h, r)][1]).log_p for h in hints]))
            log_upto[order][r], log_after[order][r] = up, whole - up
            closed = float(np.logaddexp.reduce([quoted.row(t + '"').log_p for t in prefixes]))
            log_quote[order][r] = closed - up
    result = OrderFactors(list(names), log_upto, log_after, ("", ""), log_quote)
    if pair is None:
        first, second = (max(names, key=result.conditional(o).get) for o in FieldOrder.ORDERS)
        pair = (first, second) if first != second else (names[0], names[1])
    result.pair = tuple(pair)
    return result


# -- 3. The token budget -------------------------------------------------------------------------
BUDGET_PROMPT = PROMPT  # the course's running question
BUDGET_SCHEMA = {"type": "object",
                 "properties": {"nombre": {"type": "string", "maxLength": 12},
                                "edad": {"type": "integer", "minimum": 0, "maximum": 120}},
                 "required": ["nombre", "edad"], "additionalProperties": False}


@dataclass
class BudgetDemo:
    """The same schema sampled three ways: ``free`` (no budget), ``plain`` (``budget`` tokens,
    then cut) and ``aware`` (budget-aware masks). ``shortest``: tokens of the shortest valid
    answer (``Matcher.min_tokens_to_finish``)."""
    budget: int
    shortest: int
    free: list
    plain: list
    aware: list

    @property
    def n(self) -> int:
        return len(self.plain)

    @staticmethod
    def _valid(gens) -> float:
        return sum(g.grammar.accepts(g.bytes) for g in gens) / len(gens)

    @property
    def valid_plain(self) -> float:
        return self._valid(self.plain)

    @property
    def valid_aware(self) -> float:
        return self._valid(self.aware)

    @staticmethod
    def _name_length(gens) -> float:
        """Mean characters of ``nombre`` over the valid answers (nan when none is valid)."""
        names = [json.loads(g.text)["nombre"] for g in gens if g.grammar.accepts(g.bytes)]
        return sum(map(len, names)) / len(names) if names else math.nan

    @property
    def name_free(self) -> float:
        return self._name_length(self.free)

    @property
    def name_aware(self) -> float:
        return self._name_length(self.aware)

    @property
    def tokens_free(self) -> float:
        return sum(len(g.token_ids) for g in self.free) / len(self.free)

    def _repr_html_(self) -> str:
        rows = []
        for i in range(min(4, self.n)):
            cells = []
            for g in (self.plain[i], self.aware[i]):
                status = _("válido") if g.grammar.accepts(g.bytes) else _("incompleto")
                cells.append(f'<td><code class="answer">{escape(g.text)}</code><br><small>'
                             f'{len(g.token_ids)} tokens · {status}</small></td>')
            rows.append(f"<tr><td>{i}</td>{''.join(cells)}</tr>")
        return styled(
            f'<div data-testid="budget-demo" data-budget="{self.budget}" data-n="{self.n}" '
            f'data-valid-plain="{self.valid_plain!r}" data-valid-aware="{self.valid_aware!r}">'
            '<p class="enum-summary">'
            + _("Presupuesto: {budget} tokens (la respuesta válida más corta necesita {shortest}). "
                "Válidas: <strong>{plain}</strong> cortando al agotar el presupuesto, "
                "<strong>{aware}</strong> con la máscara que respeta el presupuesto ({n} respuestas "
                "cada una). Sin presupuesto, las respuestas usan {tokens} tokens de media y el nombre "
                "ocupa {name_free} caracteres; con la máscara que lo respeta, {name_aware}.").format(
                    budget=self.budget, shortest=self.shortest, plain=fmt_percent(self.valid_plain),
                    aware=fmt_percent(self.valid_aware), n=self.n, tokens=_mean(self.tokens_free),
                    name_free=_mean(self.name_free), name_aware=_mean(self.name_aware))
            + '</p>' + _scroll(_("respuestas con presupuesto")) + '<table class="samples"><caption>'
            + _("Las primeras respuestas de cada lote") + '</caption><thead><tr>'
            + _cols(_("fila"), _("cortada al agotar el presupuesto"), _("máscara que respeta el presupuesto"))
            + f'</tr></thead><tbody>{"".join(rows)}</tbody></table></div></div>')


def budget_demo(model, tok, *, budget: int = 22, n: int = 40, seed: int = 0,
                prompt: str = BUDGET_PROMPT, schema: dict = BUDGET_SCHEMA) -> BudgetDemo:
    """Three batches of ``n`` answers (same seed): without a budget, cut at ``budget`` tokens,
    and with ``budget_aware=True``. Raises masker.BudgetTooSmall when ``budget`` is below the
    shortest valid answer."""
    grammar = compile_json_schema(schema)
    shortest = grammar.matcher(tok.vocab).min_tokens_to_finish()
    free = sample_batch(model, tok, prompt, grammar, n=n, seed=seed)
    plain = sample_batch(model, tok, prompt, grammar, n=n, seed=seed, max_tokens=budget)
    aware = sample_batch(model, tok, prompt, grammar, n=n, seed=seed, max_tokens=budget,
                         budget_aware=True)
    return BudgetDemo(budget, shortest, free, plain, aware)


# -- 4. A grammar that is too strict -------------------------------------------------------------
DATE_PROMPT = "¿En qué fecha nació Benina? Responde en JSON.\n"
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


def date_schema(nullable: bool) -> dict:
    date = {"type": "string", "pattern": DATE_PATTERN}
    value = {"anyOf": [date, {"type": "null"}]} if nullable else date
    return {"type": "object", "properties": {"fecha": value}, "required": ["fecha"],
            "additionalProperties": False}


def is_calendar_date(text) -> bool:
    """True for a real YYYY-MM-DD date (month 1-12, a day that month has)."""
    try:
        datetime.date.fromisoformat(text)
        return True
    except (TypeError, ValueError):
        return False


@dataclass
class DateStudy:
    """``strict`` and ``nullable``: the sampled values of ``fecha`` (str or None). At the first
    position of the value (after the BPE tokens of ``{"fecha":``): ``p_null`` and ``p_quote``,
    the model's probability of the allowed tokens that start ``null`` and a string, and
    ``q_null``, the masked probability of ``null`` there."""
    strict: list
    nullable: list
    p_null: float
    p_quote: float

    @property
    def q_null(self) -> float:
        return self.p_null / (self.p_null + self.p_quote)

    @staticmethod
    def _real(values) -> int:
        return sum(is_calendar_date(v) for v in values if v is not None)

    @property
    def null_share(self) -> float:
        return sum(v is None for v in self.nullable) / len(self.nullable)

    def _repr_html_(self) -> str:
        rows = []
        for name, values in ((_("solo fecha"), self.strict), (_("fecha o null"), self.nullable)):
            dates = [v for v in values if v is not None]
            shown = ", ".join(f"<code>{escape(json.dumps(v))}</code>" for v in values[:4])
            rows.append(f'<tr><th scope="row">{name}</th><td class="num">{len(values) - len(dates)}'
                        f'</td><td class="num">{len(dates)}</td><td class="num">{self._real(values)}'
                        f'</td><td>{shown}</td></tr>')
        return styled(
            f'<p class="enum-summary" data-testid="date-study" data-null-share="{self.null_share!r}" '
            f'data-q-null="{self.q_null!r}">'
            + _("En la primera posición del valor, el modelo da {p_null} a empezar <code>null</code> "
                "y {p_quote} a abrir comillas: con máscara, <code>null</code> sale con probabilidad "
                "{q_null}.").format(p_null=fmt_prob(self.p_null), p_quote=fmt_prob(self.p_quote),
                                    q_null=fmt_decimal(self.q_null, 5))
            + '</p>' + _scroll(_("fechas inventadas"))
            + '<table class="compact-table"><thead><tr>'
            + _cols(_("esquema"), "null", _("fechas"), _("fechas de calendario"), _("primeras respuestas"))
            + f'</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def value_start(model, tok, prompt: str, grammar, prefix: str) -> tuple[np.ndarray, np.ndarray]:
    """The model's distribution p (float64[V]) and the allowed set (bool[V]) right after
    ``prefix``, written with its BPE tokens (``Decoder.step`` with the reader's picks). Raises
    ValueError when a BPE token of ``prefix`` is not allowed."""
    decoder = Decoder(model, tok, prompt, grammar)
    for t in tok.encode(prefix):
        decoder.step(t)
    return decoder.next_distribution(), np.array(decoder.matcher.mask())


def date_study(model, tok, *, n: int = 60, seed: int = 0, prompt: str = DATE_PROMPT) -> DateStudy:
    """``n`` masked answers for the strict and for the nullable schema, and the exact choice
    between ``null`` and a string at the value's first position."""
    values = {}
    for nullable in (False, True):
        grammar = compile_json_schema(date_schema(nullable))
        gens = sample_batch(model, tok, prompt, grammar, n=n, seed=seed)
        values[nullable] = [json.loads(g.text)["fecha"] for g in gens]
    p, mask = value_start(model, tok, prompt, compile_json_schema(date_schema(True)), '{"fecha":')
    starts = np.array([v[:1] == b"n" for v in tok.vocab])
    quotes = np.array([v[:1] == b'"' for v in tok.vocab])
    return DateStudy(values[False], values[True], float(p[mask & starts].sum()),
                     float(p[mask & quotes].sum()))


# -- 5. Huge enums -------------------------------------------------------------------------------
ENUM_SIZES = [10, 100, 1000, 10000]
LETTERS = "abcdefghijlmnopqrstuvz"


def enum_values(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct lowercase words of 5 to 10 letters (deterministic for a seed); the first
    ``k`` of a list of ``n`` are the list of ``k``."""
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    while len(seen) < n:
        seen.setdefault("".join(rng.choice(LETTERS) for _ in range(rng.randint(5, 10))))
    return list(seen)


@dataclass
class EnumScaling:
    """Per enum size: ``compile_ms`` (compiling the schema ``{"enum": [...]}``, ms), ``mask_us``
    (mean time of a first, uncached mask along the tokens of one value, µs) and ``states`` (DFA
    states). Times are wall clock on the machine that runs it."""
    sizes: list[int]
    compile_ms: list[float]
    mask_us: list[float]
    states: list[int]

    def _repr_html_(self) -> str:
        rows = "".join(f'<tr data-size="{s}" data-compile-ms="{c!r}" data-mask-us="{m!r}">'
                       f'<td class="num">{fmt_int(s)}</td><td class="num">{fmt_int(st)}</td>'
                       f'<td class="num" data-measured="">{fmt_decimal(c, 1)}</td>'
                       f'<td class="num" data-measured="">{fmt_decimal(m, 0)}</td></tr>'
                       for s, c, m, st in zip(self.sizes, self.compile_ms, self.mask_us, self.states))
        return styled(
            _scroll(_("tiempos según el tamaño del enum"))
            + '<table class="compact-table" data-testid="enum-scaling"><caption>'
            + _("Compilar un enum y calcular sus máscaras, medido en la máquina que ejecutó la celda")
            + '</caption><thead><tr>'
            + _cols(_("valores"), _("estados del DFA"), _("compilar (ms)"), _("por token: máscara y avance (µs, media)"))
            + f'</tr></thead><tbody>{rows}</tbody></table></div>' + self._ratios() + scaling_svg(self))

    def ratios(self) -> dict | None:
        """The last row over the one before it: {"size", "states", "compile", "mask"} (unitless
        ratios of this very run), or None with fewer than two sizes."""
        if len(self.sizes) < 2:
            return None
        columns = {"size": self.sizes, "states": self.states, "compile": self.compile_ms,
                   "mask": self.mask_us}
        return {k: xs[-1] / xs[-2] if xs[-2] else math.inf for k, xs in columns.items()}

    def _ratios(self) -> str:
        r = self.ratios()
        if r is None:
            return ""

        def times(x):
            return "×" + (fmt_decimal(x, 1) if math.isfinite(x) else "∞")

        return ('<p class="enum-summary" data-testid="enum-ratios">'
                + _("De {a} a {b} valores ({size}): estados del DFA {states}; compilar "
                    '<span data-measured="">{compile}</span>; una máscara <span data-measured="">'
                    "{mask}</span> (tiempos de esta ejecución).").format(
                        a=fmt_int(self.sizes[-2]), b=fmt_int(self.sizes[-1]), size=times(r["size"]),
                        states=times(r["states"]), compile=times(r["compile"]), mask=times(r["mask"]))
                + '</p>')


def enum_scaling(tok, sizes=ENUM_SIZES, seed: int = 0, repeats: int = 3) -> EnumScaling:
    """Compile ``{"enum": values}`` for each size and time it (``time.perf_counter``), then time
    the masks along the BPE tokens of the first value on a fresh matcher (every mask computed
    for the first time); each time is the fastest of ``repeats`` measurements (a fresh compile
    each), so one pause of the machine does not turn the order of the sizes around.
    Deterministic except for the times. Raises ValueError for an empty ``sizes``, a size below 1
    (an empty enum admits no value) or ``repeats`` below 1."""
    if not sizes or min(sizes) < 1:
        raise ValueError(f"sizes must be enum sizes of at least 1, found {list(sizes)}")
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, found {repeats}")
    words = enum_values(max(sizes), seed)
    compile_ms, mask_us, states = [], [], []
    ids = tok.encode(json.dumps(words[0]))
    for size in sizes:
        best_compile = best_mask = math.inf
        for _repeat in range(repeats):
            start = time.perf_counter()
            grammar = compile_json_schema({"enum": words[:size]})
            best_compile = min(best_compile, (time.perf_counter() - start) * 1e3)
            matcher = grammar.matcher(tok.vocab)
            start = time.perf_counter()
            for t in ids:
                matcher.mask()
                matcher.consume(t)
            best_mask = min(best_mask, (time.perf_counter() - start) * 1e6 / len(ids))
        compile_ms.append(best_compile)
        mask_us.append(best_mask)
        states.append(getattr(grammar.automaton, "n_states", 0))
    return EnumScaling(list(sizes), compile_ms, mask_us, states)


def scaling_svg(result: EnumScaling, width: int = 360, height: int = 220) -> str:
    """A log-log plot of compile time (ms) and mask time (µs, as ms) against the enum size:
    an SVG string that scales to its box (viewBox), with a text title and description."""
    pad_l, pad_r, pad_t, pad_b = 46, 24, 12, 34  # pad_r: room for half of the last label, «10 000»
    xs = [math.log10(max(s, 1)) for s in result.sizes]
    series = [(_("compilar"), "#1f5fa8", result.compile_ms),
              (_("una máscara"), "#b3541e", [u / 1e3 for u in result.mask_us])]
    values = [max(v, 1e-4) for _, _, vs in series for v in vs]
    lo, hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    hi = max(hi, lo + 1)
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1

    def px(x):
        return pad_l + (x - x0) / (x1 - x0) * (width - pad_l - pad_r)

    def py(v):
        return pad_t + (hi - math.log10(max(v, 1e-4))) / (hi - lo) * (height - pad_t - pad_b)

    parts = []
    for e in range(lo, hi + 1):
        y = py(10.0 ** e)
        parts.append(f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="#d9d5ca"/><text x="{pad_l - 4}" y="{y + 3:.1f}" text-anchor="end" '
                     f'font-size="10">{_ms_label(e)}</text>')
    for s, x in zip(result.sizes, xs):
        parts.append(f'<text x="{px(x):.1f}" y="{height - pad_b + 14}" text-anchor="middle" '
                     f'font-size="10">{fmt_int(s)}</text>')
    for name, colour, vs in series:
        points = " ".join(f"{px(x):.1f},{py(v):.1f}" for x, v in zip(xs, vs))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.extend(f'<circle cx="{px(x):.1f}" cy="{py(v):.1f}" r="3" fill="{colour}"/>'
                     for x, v in zip(xs, vs))
    legend = "".join(f'<text x="{pad_l + 8 + 110 * i}" y="{height - 4}" font-size="10" '
                     f'fill="{c}">■ {n}</text>' for i, (n, c, _) in enumerate(series))
    desc = "; ".join(_("{size} valores: compilar {compile} ms, una máscara {mask} µs").format(
                         size=fmt_int(s), compile=fmt_decimal(c, 1), mask=fmt_decimal(m, 0))
                     for s, c, m in zip(result.sizes, result.compile_ms, result.mask_us))
    return (f'<figure class="trap-plot"><svg data-measured="" viewBox="0 0 {width} {height}" role="img" '
            'aria-labelledby="enum-plot-title enum-plot-desc"><title id="enum-plot-title">'
            + _("Tiempo frente a valores del enum, escalas logarítmicas")
            + f'</title><desc id="enum-plot-desc">{escape(desc)}</desc>{"".join(parts)}{legend}</svg>'
            + '<figcaption>' + _("Escalas logarítmicas: valores del enum (horizontal) y tiempo (vertical).")
            + '</figcaption></figure>')


def _ms_label(exponent: int) -> str:
    """An axis label for 10**exponent milliseconds."""
    value = 10.0 ** exponent
    if value >= 1000:
        return f"{fmt_int(int(value / 1000))} s"
    if value >= 1:
        return f"{fmt_int(int(value))} ms"
    return f"{fmt_int(int(round(value * 1000)))} µs"


# -- 6. Recursive schemas ------------------------------------------------------------------------
THREAD_PROMPT = "Escribe un hilo de comentarios en JSON.\n"


def comment(item: dict | None, text_length: int = 10, max_replies: int | None = 2) -> dict:
    """A comment object: ``texto`` and ``respuestas``, an array of up to ``max_replies`` items
    of schema ``item`` (``max_replies`` None: no ``maxItems``, any number of replies; ``item``
    None: the array must be empty, the last level of a bound)."""
    replies = {"type": "array", "items": item}
    if max_replies is not None:
        replies["maxItems"] = max_replies
    props = {"texto": {"type": "string", "maxLength": text_length},
             "respuestas": replies if item is not None else {"type": "array", "maxItems": 0}}
    return {"type": "object", "properties": props, "required": list(props),
            "additionalProperties": False}


THREAD_SCHEMA = {"$defs": {"comentario": comment({"$ref": "#/$defs/comentario"})},
                 "$ref": "#/$defs/comentario"}


def flattened_thread(depth: int, max_replies: int | None = 2) -> dict:
    """The thread schema unrolled ``depth`` levels deep (no ``$ref``): replies to replies down
    to ``depth`` levels, then comments whose ``respuestas`` must be empty. What an FSM-only
    engine compiles: it accepts exactly the threads of the recursive schema at most ``depth``
    levels deep. ``max_replies``: each level's ``maxItems`` (THREAD_SCHEMA's is 2; None: none)."""
    schema = comment(None)
    for _ in range(depth):
        schema = comment(schema, max_replies=max_replies)
    return schema


@dataclass
class DepthBound:
    """Per depth bound: DFA states and regular-expression characters of the unrolled schema."""
    depths: list[int]
    states: list[int]
    chars: list[int]
    max_replies: int | None = 2  # each level's maxItems (None: none)

    def _repr_html_(self) -> str:
        rows = "".join(f'<tr data-depth="{d}" data-states="{s}"><td class="num">{d}</td>'
                       f'<td class="num">{fmt_int(s)}</td><td class="num">{fmt_int(c)}</td></tr>'
                       for d, s, c in zip(self.depths, self.states, self.chars))
        return styled(_scroll(_("estados según la profundidad")) + '<table class="compact-table" '
                      'data-testid="depth-bound"><caption>'
                      + _("El hilo aplanado hasta una profundidad fija")
                      + (f" (maxItems: {self.max_replies})" if self.max_replies is not None
                         else " (" + _("sin maxItems") + ")")
                      + '</caption><thead><tr>'
                      + _cols(_("profundidad"), _("estados del DFA"), _("caracteres de la expresión regular"))
                      + f'</tr></thead><tbody>{rows}</tbody></table></div>')


def depth_bounded(depths=(0, 1, 2, 3, 4), max_replies: int | None = 2) -> DepthBound:
    """Compile ``flattened_thread(d, max_replies)`` for each depth: the regular route's DFA states
    grow with the bound (with ``maxItems: 2``, the DFA remembers at each open level whether it is
    writing the first or the second reply, so the states about double per level; with
    ``maxItems: 1`` or no cap, each level adds about the same number of states). Raises ValueError for a negative depth, and LimitExceeded when a depth needs more
    DFA states than the masker allows (``compile_json_schema`` then falls back to Earley, which
    has no states to count: from depth 5 on, with the default limit)."""
    states, chars = [], []
    for d in depths:
        if d < 0:
            raise ValueError(f"depths must be at least 0, found {d}")
        grammar = compile_json_schema(flattened_thread(d, max_replies))
        if not isinstance(grammar.automaton, Dfa):
            raise LimitExceeded(f"the thread flattened to depth {d} needs more DFA states than the "
                                "masker allows (compile_json_schema compiles it with Earley instead)",
                                "max_states", DEFAULT_MAX_DFA_STATES, "use a smaller depth",
                                code="trampas.thread_states", depth=d)
        states.append(grammar.automaton.n_states)
        chars.append(len(grammar.source))
    return DepthBound(list(depths), states, chars, max_replies)


def nesting_depth(value) -> int:
    """Levels of ``respuestas`` in a comment thread (a comment without replies: 0)."""
    replies = value.get("respuestas") or []
    return 1 + max(map(nesting_depth, replies)) if replies else 0


def thread_state(text: str) -> dict:
    """Where a (possibly cut) compact comment thread stands, read by a scanner that skips the
    insides of strings: ``comments`` (``"texto"`` keys begun), ``depth`` (``respuestas`` arrays
    still open), ``last`` (how the comment being written when the text ended sits: "first reply"
    when it opened a nested array, "second reply" when it follows a sibling, "top" for the
    root; None for a complete thread) and ``texts``: the lengths, in characters, of the texts
    whose closing quote was written."""
    depth, comments, in_string, escaped, start, last = 0, 0, False, False, 0, "top"
    texts, prev, key = [], "", ""
    for i, c in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
                value = text[start:i]
                if key == "texto" and prev == ":":
                    texts.append(len(json.loads(f'"{value}"')))
                key = value if prev in ("{", ",") else key
                prev = '"'
            continue
        if c == '"':
            in_string, start = True, i + 1
            if prev in ("{", ","):
                pass
            continue
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == "{" and text[i + 1:i + 9] == '"texto":':
            comments += 1
            last = "top" if depth == 0 else ("second reply" if prev == "," else "first reply")
        prev = c
    complete = False
    try:
        json.loads(text)
        complete = True
    except ValueError:
        pass
    return {"comments": comments, "depth": depth, "last": None if complete else last, "texts": texts}


@dataclass
class CutThreads:
    """Threads cut by a token budget, one row each: tokens, comments begun, whether it ended
    valid, and for the others where the comment being written when the budget ran out sits
    (:func:`thread_state`); under the table, the mean length of the finished texts against the
    schema's ``maxLength`` (``max_length``)."""
    gens: list
    max_length: int = 10

    def states(self) -> list[dict]:
        return [thread_state(g.text) for g in self.gens]

    def _repr_html_(self) -> str:
        where = {"first reply": _("una respuesta dentro de una respuesta"),
                 "second reply": _("una segunda respuesta del mismo nivel"), "top": _("el comentario raíz")}
        rows, lengths = [], []
        for g, st in zip(self.gens, self.states()):
            lengths += st["texts"]
            state = _("válido") if st["last"] is None else _("cortado en {where}").format(where=where[st["last"]])
            rows.append(f'<tr data-comments="{st["comments"]}" data-last="{st["last"] or ""}">'
                        f'<td class="num">{fmt_int(len(g.token_ids))}</td><td class="num">{fmt_int(st["comments"])}</td>'
                        f'<td>{escape(state)}</td></tr>')
        mean = sum(lengths) / len(lengths) if lengths else 0.0
        heads = (_("tokens"), _("comentarios empezados"), _("estado"))
        summary = _("Los textos terminados miden de media {mean} caracteres (maxLength: {max})").format(
            mean=fmt_decimal(mean, 1), max=fmt_int(self.max_length))
        return styled(_scroll(_("hilos cortados")) + '<table class="compact-table" data-testid="cut-threads"><caption>'
                      + _("Los hilos cortados por el presupuesto, uno por fila") + "</caption><thead><tr>"
                      + "".join(f'<th scope="col">{h}</th>' for h in heads) + "</tr></thead><tbody>"
                      + "".join(rows) + f'</tbody></table></div><p class="enum-summary">{summary}.</p>')


# -- a compact strip of answers, shared by the cells ----------------------------------------------
@dataclass
class Answers:
    """A list of generations shown as text, token count and status (``data-testid=answers``)."""
    gens: list
    caption: str = ""
    extra: list = field(default_factory=list)

    def _repr_html_(self) -> str:
        valid, incomplete = _("válido"), _("incompleto")
        rows = "".join(f'<tr><td><code class="answer" data-testid="answer">{escape(g.text)}</code>'
                       f'</td><td class="num">{len(g.token_ids)}</td><td>'
                       f'{valid if g.grammar.accepts(g.bytes) else incomplete}</td></tr>'
                       for g in self.gens)
        caption = f"<caption>{escape(self.caption)}</caption>" if self.caption else ""
        return styled(_scroll(_("respuestas")) + f'<table class="samples">{caption}<thead><tr>'
                      + _cols(_("respuesta"), "tokens", _("estado"))
                      + f'</tr></thead><tbody>{rows}</tbody></table></div>')


__all__ = ["AgeStudy", "Answers", "BudgetDemo", "DateStudy", "DepthBound", "EnumScaling",
           "FieldOrder", "age_study", "budget_demo", "date_study", "depth_bounded",
           "enum_scaling", "field_order", "flattened_thread", "nesting_depth"]
