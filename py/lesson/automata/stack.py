"""The lesson «Del esquema al autómata», section 5: JSON needs a stack.

A recursive grammar of nested arrays and objects (``NESTED_GBNF``), recognized by the masker's
Earley automaton, against regular approximations bounded in depth (``bounded_regex``): the live
Earley items grow linearly with the depth, the minimal DFA's states double with each level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from masker import compile_cfg, compile_regex

from ..i18n import _
from ..numbers import fmt_int
from ..views import styled
from .route import header_cells


# ---------------------------------------------------------------- JSON needs a stack

# Nested JSON values with arrays and objects: the lesson's recursive grammar (GBNF, masker.cfg).
NESTED_GBNF = r'''root ::= value
value ::= "0" | "[" value ("," value)* "]" | "{\"a\":" value "}"'''


def bounded_regex(depth: int) -> str:
    """The same values as ``NESTED_GBNF`` nested at most ``depth`` levels, as a regular expression
    (each level repeats the one below inside both brackets). ``depth`` >= 0; ValueError otherwise."""
    if depth < 0:
        raise ValueError(f"depth must be >= 0, found {depth}")
    value = "0"
    for _level in range(depth):
        value = f'(0|\\[{value}(,{value})*\\]|\\{{"a":{value}\\}})'
    return value


def nested_prefix(depth: int) -> str:
    """An open prefix ``depth`` levels deep, alternating brackets: ``[{"a":[{"a":...``."""
    return "".join("[" if k % 2 == 0 else '{"a":' for k in range(depth))


def earley_items(state) -> int:
    """Items an Earley state holds alive: its own and those of every earlier set its items still
    point to (their origins: the parser's stack). Counts scan items, lexeme items and items
    waiting for a nonterminal (``masker.earley.EarleySet``)."""
    seen, todo, total = {id(state)}, [state], 0
    while todo:
        s = todo.pop()
        items = list(s.scans) + list(s.lexes) + [it for waiting in s.waiting.values()
                                                 for it in waiting]
        total += len(items)
        for item in items:
            origin = item[-1]
            if id(origin) not in seen:
                seen.add(id(origin))
                todo.append(origin)
    return total


def current_items(state) -> int:
    """Items in the Earley state's own, current set alone (scan, lexeme and waiting items), without
    the earlier sets they point to: what :func:`earley_items` adds to that is the stack."""
    return len(list(state.scans) + list(state.lexes) + [it for waiting in state.waiting.values() for it in waiting])


@dataclass
class StackRow:
    """One depth of :func:`stack_growth`: live Earley items after ``nested_prefix(depth)`` and the
    states of the minimal DFA of ``bounded_regex(depth)``."""
    depth: int
    earley_items: int
    dfa_states: int | None  # None: not computed at this depth
    current_items: int | None = None  # the current Earley set alone (None: not measured)


def stack_growth(depths, dfa_depths=None) -> list[StackRow]:
    """For each depth d: the live Earley items after ``nested_prefix(d)`` with the recursive grammar
    ``NESTED_GBNF``, and the minimal DFA states of ``bounded_regex(d)`` when d is in ``dfa_depths``
    (default: every depth; the DFA a bit more than doubles with each level, so keep them small:
    d = 7 takes about 0.2 s in CPython, and from d = 8 ``compile_regex`` raises
    ``masker.errors.LimitExceeded``: its subset construction, before minimizing, passes
    ``max_states`` (20 000), though the minimal DFA would have 2042 states; past d = 10 it takes
    seconds to get there).
    A depth outside ``dfa_depths`` has ``dfa_states=None``, which the plot's table shows as
    «no calculado»."""
    grammar = compile_cfg(NESTED_GBNF)
    automaton = grammar.automaton
    dfa_depths = set(depths if dfa_depths is None else dfa_depths)
    rows = []
    for d in depths:
        state = automaton.start()
        for b in nested_prefix(d).encode():
            state = automaton.step(state, b)
        states = compile_regex(bounded_regex(d)).automaton.n_states if d in dfa_depths else None
        rows.append(StackRow(d, earley_items(state), states, current_items(state)))
    return rows


SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


class StackPlot:
    """Both series of :func:`stack_growth` against depth, on a logarithmic y axis (SVG, with both
    axes titled), with the numbers in a table beside it. Test hook: ``[data-testid=stack-plot]``;
    the axis titles are ``text.axis-title`` with ``data-axis`` x or y."""

    W, H, PAD = 360, 240, 50
    BOTTOM, TOP = 194, 20  # y of the plot's 10⁰ line and of its highest grid line

    def __init__(self, rows: list[StackRow]):
        if not rows:
            raise ValueError("stack_growth gave no rows to plot")
        self.rows = rows

    def _xy(self, d: int, v: float, top: float) -> tuple[float, float]:
        depths = [r.depth for r in self.rows]
        lo, hi = min(depths), max(depths)
        x = self.PAD + (d - lo) / max(1, hi - lo) * (self.W - self.PAD - 16)
        y = self.BOTTOM - math.log10(max(v, 1)) / max(top, 1e-9) * (self.BOTTOM - self.TOP)
        return x, y

    def _axis_titles(self) -> str:
        """The two axis titles: depth under the x axis, items / states (log scale) along the y axis."""
        mid_x = (self.PAD + self.W - 16) / 2
        mid_y = (self.BOTTOM + self.TOP) / 2
        x_title = _("profundidad (niveles)")
        y_title = _("ítems / estados (escala log.)")
        return (f'<text class="axis-title" data-axis="x" x="{mid_x:.1f}" y="{self.H - 6}" '
                f'text-anchor="middle">{x_title}</text>'
                f'<text class="axis-title" data-axis="y" x="0" y="0" text-anchor="middle" '
                f'transform="translate(13 {mid_y:.1f}) rotate(-90)">{y_title}</text>')

    def _repr_html_(self) -> str:
        values = [r.earley_items for r in self.rows] + [r.dfa_states for r in self.rows if r.dfa_states]
        top = math.ceil(math.log10(max(values + [10])))
        parts = []
        for k in range(0, top + 1, max(1, math.ceil((top + 1) / 6))):  # at most 6 grid lines
            _x, y = self._xy(self.rows[0].depth, 10 ** k, top)
            parts.append(f'<line class="grid" x1="{self.PAD}" x2="{self.W - 10}" y1="{y:.1f}" y2="{y:.1f}"/>'
                         f'<text x="{self.PAD - 6}" y="{y + 4:.1f}" text-anchor="end">10{str(k).translate(SUPERSCRIPT)}</text>')
        for r in self.rows:
            x, _y = self._xy(r.depth, 1, top)
            parts.append(f'<text x="{x:.1f}" y="{self.BOTTOM + 18}" text-anchor="middle">{r.depth}</text>')
        parts.append(self._axis_titles())
        for name, cls, get in (("Earley", "s-earley", lambda r: r.earley_items),
                               ("DFA", "s-dfa", lambda r: r.dfa_states)):
            pts = [self._xy(r.depth, get(r), top) for r in self.rows if get(r)]
            if pts:
                parts.append(f'<polyline class="{cls}" points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in pts)}"/>')
                parts.extend(f'<circle class="{cls}" cx="{x:.1f}" cy="{y:.1f}" r="3"/>' for x, y in pts)
        svg_label = _("Ítems de Earley y estados del DFA acotado según la profundidad, escala logarítmica")
        svg = (f'<svg class="stack-svg" role="img" viewBox="0 0 {self.W} {self.H}" '
               f'style="width:100%;max-width:{self.W * 1.5:.0f}px;height:auto" '
               f'aria-label="{escape(svg_label)}">'
               + "".join(parts) + "</svg>")
        missing = _("no calculado")
        rows = "".join(f"<tr><td class='num'>{r.depth}</td><td class='num'>{fmt_int(r.earley_items)}</td>"
                       f"<td class='num'>{fmt_int(r.current_items) if r.current_items is not None else '—'}</td>"
                       f"<td class='num'>{fmt_int(r.dfa_states) if r.dfa_states else missing}</td></tr>" for r in self.rows)
        plot_label = _("Gráfica de crecimiento")
        key_earley = _("ítems vivos de Earley (gramática recursiva)")
        key_dfa = _("estados del DFA con la profundidad acotada")
        table_label = _("Crecimiento con la profundidad")
        head = header_cells(_("profundidad|ítems vivos de Earley|ítems del conjunto actual|estados del DFA"))
        return styled(
            '<div class="stack-plot" data-testid="stack-plot"><div class="table-scroll" tabindex="0" role="region" '
            f'aria-label="{escape(plot_label)}">{svg}</div><p class="legend"><span class="key s-earley"></span> '
            f'{key_earley} · <span class="key s-dfa"></span> '
            f'{key_dfa}</p><div class="table-scroll" tabindex="0" role="region" '
            f'aria-label="{escape(table_label)}"><table class="compact-table"><thead><tr>'
            f'{head}'
            f'</tr></thead><tbody>{rows}</tbody></table></div></div>')
