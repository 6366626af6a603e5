"""The lesson «Del esquema al autómata»: the masker's machinery, shown on its own objects.

Everything here reads the masker's own structures (``masker.dfa.Dfa``: ``table``, ``byte_class``,
``accepting``; ``masker.trie.TokenTrie``; ``masker.earley.EarleySet``) or drives its automaton
interface (``start``, ``step``, ``is_accepting``), so what the page draws is what the masker uses.

- :func:`regex_route`: Thompson NFA -> subset construction -> minimal DFA, with the size of each;
- :class:`DfaDiagram`: a DFA as an SVG picture (a small layered layout, written here);
- :func:`crossings` / :class:`CrossingTable`: the edges each allowed token walks in one step;
- the token trie and the index: :mod:`lesson.automata.trie`; the stack that JSON needs:
  :mod:`lesson.automata.stack`; fast-forward: :mod:`lesson.automata.forced`; the exercise: :mod:`lesson.automata.phones`.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass
from html import escape

from masker.dfa import DEFAULT_MAX_DFA_STATES, determinize
from masker.nfa import build_nfa
from masker.regex_parse import parse_regex
from ..i18n import _
from ..numbers import fmt_int
from ..views import is_partial, styled, token_html, token_label


def header_cells(names: str) -> str:
    """A table's column headers from one message, its names separated by «|» (one message per
    row: a column's word alone, «estado», would be one message for every page, whatever its
    sense there), as ``<th scope="col">`` cells."""
    return "".join(f'<th scope="col">{name}</th>' for name in names.split("|"))


# ---------------------------------------------------------------- regex -> automaton

@dataclass
class RegexRoute:
    """Sizes along the route of ``pattern``: NFA states (Thompson), DFA states out of the subset
    construction, and states after minimization; ``dfa`` is the minimal ``masker.dfa.Dfa``."""
    pattern: str
    nfa_states: int
    subset_states: int
    dfa: object

    @property
    def min_states(self) -> int:
        """States of the minimal DFA (the masker's, dead state excluded)."""
        return self.dfa.n_states


def regex_route(pattern: str, max_states: int = DEFAULT_MAX_DFA_STATES) -> RegexRoute:
    """Run the masker's regex pipeline step by step: ``parse_regex`` -> ``build_nfa`` (Thompson,
    CACM 1968) -> ``determinize`` (subset construction, Rabin and Scott 1959, then Hopcroft's
    minimization). ``max_states`` bounds the subset construction, before minimizing (the masker's
    default, 20 000 states; raise it only at build time: each state costs memory and time). Raises
    what ``compile_regex`` raises (GrammarSyntaxError, LimitExceeded past ``max_states``).
    ``compile_regex`` takes a shortcut for a plain list of literal texts; the minimal DFA is the
    same either way (the tests check the state counts)."""
    nfa, start, accept = build_nfa(parse_regex(pattern))
    dfa = determinize(nfa, start, accept, max_states=max_states)
    return RegexRoute(pattern, len(nfa.eps), dfa.build_work.get("dfa_states_built", dfa.n_states), dfa)


def keys_regex(k: int, any_order: bool) -> str:
    """An object with the k keys ``"a":0``, ``"b":0``, … each exactly once, in the order of the
    alphabet or in any order (every permutation, as a regex alternation: k! branches, so keep k
    small; k = 5 compiles in about 20 ms in CPython). ``k`` from 1 to 26; ValueError otherwise."""
    if not 1 <= k <= 26:
        raise ValueError(f"k must be between 1 and 26 keys, found {k}")
    keys = [f'"{chr(97 + i)}":0' for i in range(k)]
    orders = itertools.permutations(keys) if any_order else [keys]
    return "|".join("\\{" + ",".join(o) + "\\}" for o in orders)


def byte_text(b: int) -> str:
    """One byte for a diagram label: printable ASCII as itself (space as ␣), any other as C3."""
    if b == 0x20:
        return "␣"
    return chr(b) if 0x21 <= b <= 0x7E else f"{b:02X}"


def bytes_label(values: list[int], limit: int = 4) -> tuple[str, str]:
    """A short label for a set of bytes (runs as ``a–z``) and the full one, for a tooltip."""
    runs, values = [], sorted(values)
    for b in values:
        if runs and runs[-1][1] == b - 1:
            runs[-1][1] = b
        else:
            runs.append([b, b])
    parts = [byte_text(a) if a == b else (f"{byte_text(a)}{byte_text(b)}" if b == a + 1 else
             f"{byte_text(a)}–{byte_text(b)}") for a, b in runs]
    full = " ".join(parts)
    return (full if len(parts) <= limit else " ".join(parts[:limit]) + " …"), full


def dfa_edges(dfa) -> dict[tuple[int, int], list[int]]:
    """``{(state, next state): [bytes]}`` over the live transitions of a ``masker.dfa.Dfa``."""
    by_class: dict[int, list[int]] = {}
    for b in range(256):
        by_class.setdefault(dfa.byte_class[b], []).append(b)
    edges: dict[tuple[int, int], list[int]] = {}
    for s, row in enumerate(dfa.table):
        for c, t in enumerate(row):
            if t >= 0 and c in by_class:
                edges.setdefault((s, t), []).extend(by_class[c])
    return edges


def layers(dfa) -> list[list[int]]:
    """States by breadth-first distance from the start state 0 (each a list, in visiting order)."""
    depth, order, todo = {0: 0}, [0], deque([0])
    while todo:
        s = todo.popleft()
        for t in dfa.table[s]:
            if t >= 0 and t not in depth:
                depth[t] = depth[s] + 1
                order.append(t)
                todo.append(t)
    out: list[list[int]] = [[] for _ in range(max(depth.values()) + 1)]
    for s in order:
        out[depth[s]].append(s)
    return out


class DfaDiagram:
    """A ``masker.dfa.Dfa`` drawn as SVG: circles for states (double: accepting), arrows for live
    transitions labelled by their bytes (printable ASCII as such, other bytes in hex: ``C3``), states
    in columns by distance from the start. ``title`` (the pattern, say) names the picture in its
    ``aria-label``, ``<title>`` and caption, as given (the caption adds its colon). ``max_states``
    (default 40) guards the page: a larger DFA raises ValueError (draw a smaller pattern), an
    automaton without a state table (``CountedDfa``, ``EarleyAutomaton``) TypeError. Test hooks:
    ``svg[data-testid=dfa-diagram]`` with ``data-states`` and ``data-accepting`` (the counts of the
    DFA)."""

    DX, DY, R = 110, 74, 17

    def __init__(self, dfa, title: str = "", max_states: int = 40):
        if not hasattr(dfa, "table"):
            raise TypeError(f"a {type(dfa).__name__} has no state table to draw: DfaDiagram draws the "
                            f"automaton of a plain regular pattern (no large counted repetition, no "
                            f"recursion), e.g. compile_regex(r\"[sS][íi]|[nN]o\").automaton")
        if dfa.n_states > max_states:
            raise ValueError(f"the DFA has {dfa.n_states} states; the diagram draws at most {max_states}")
        self.dfa, self.title = dfa, title

    def positions(self) -> dict[int, tuple[float, float]]:
        cols = layers(self.dfa)
        tallest = max(map(len, cols))
        pos = {}
        for i, col in enumerate(cols):
            top = (tallest - len(col)) * self.DY / 2
            for k, s in enumerate(col):
                pos[s] = (60 + i * self.DX, 74 + top + k * self.DY)
        return pos

    def svg(self) -> str:
        dfa, r = self.dfa, self.R
        pos = self.positions()
        edges = sorted(dfa_edges(dfa).items())
        longest = max((len(bytes_label(v)[0]) for _, v in edges), default=0)
        width = max(x for x, _ in pos.values()) + 50 + 7.5 * longest  # room for a label on the right
        height = max(y for _, y in pos.values()) + 74
        n_acc = sum(dfa.accepting)
        parts = ['<defs><marker id="dfa-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                 'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#33404f"/>'
                 '</marker></defs>']
        x0, y0 = pos[0]
        parts.append(f'<line class="dfa-edge" x1="{x0 - r - 28}" y1="{y0}" x2="{x0 - r - 2}" y2="{y0}" '
                     'marker-end="url(#dfa-arrow)"/>')
        for (s, t), values in edges:
            short, full = bytes_label(values)
            parts.append(self._edge(pos[s], pos[t], s == t, short, full))
        for s, (x, y) in pos.items():
            ring = f'<circle cx="{x}" cy="{y}" r="{r - 4}" class="dfa-ring"/>' if dfa.accepting[s] else ""
            parts.append(f'<g class="dfa-state{" accepting" if dfa.accepting[s] else ""}" data-state="{s}">'
                         f'<circle cx="{x}" cy="{y}" r="{r}"/>{ring}'
                         f'<text x="{x}" y="{y + 4}" text-anchor="middle">{s}</text></g>')
        label = (_("Diagrama del autómata: {states} estados, {accepting} de aceptación").format(
                     states=dfa.n_states, accepting=n_acc) + (f" ({self.title})" if self.title else ""))
        return (f'<svg class="dfa-diagram" data-testid="dfa-diagram" data-states="{dfa.n_states}" '
                f'data-accepting="{n_acc}" role="img" aria-label="{escape(label)}" '
                f'style="width:100%;max-width:{width:.0f}px;height:auto" '
                f'viewBox="0 0 {width:.0f} {height:.0f}"><title>{escape(label)}</title>{"".join(parts)}</svg>')

    def _edge(self, a, b, loop: bool, short: str, full: str) -> str:
        r = self.R
        (x1, y1), (x2, y2) = a, b
        tip = f'<title>{escape(full)}</title>'
        anchor = "middle"
        if loop:
            path = f"M{x1 - 8},{y1 - r + 2} C{x1 - 30},{y1 - 62} {x1 + 30},{y1 - 62} {x1 + 8},{y1 - r + 2}"
            lx, ly = x1, y1 - 52
        else:
            dx, dy = x2 - x1, y2 - y1
            dist = math.hypot(dx, dy) or 1
            ux, uy = dx / dist, dy / dist
            bend = 0 if (0 < dx <= self.DX + 1) else (34 + 0.12 * dist) * (1 if dx <= 0 else -1)
            mx, my = (x1 + x2) / 2 - uy * bend, (y1 + y2) / 2 + ux * bend
            sx, sy = x1 + ux * r, y1 + uy * r
            ex, ey = x2 - ux * (r + 1), y2 - uy * (r + 1)
            path = f"M{sx:.1f},{sy:.1f} Q{mx:.1f},{my:.1f} {ex:.1f},{ey:.1f}"
            lx, ly = (sx + 2 * mx + ex) / 4, (sy + 2 * my + ey) / 4 - 4
            if abs(dx) < 1:  # same column: the label beside the arc, on its outer side
                anchor = "start" if mx > x1 else "end"
                lx, ly = lx + (5 if mx > x1 else -5), ly + 8
        return (f'<g class="dfa-move"><path class="dfa-edge" d="{path}" marker-end="url(#dfa-arrow)"/>'
                f'<text class="dfa-label" x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}">{escape(short)}'
                f'</text>{tip}</g>')

    def transitions_html(self) -> str:
        """The diagram as text: one row per drawn arrow (state, bytes, next state), for a reader who
        cannot see the picture (``[data-testid=dfa-transitions]``)."""
        accepting = _(" (aceptación)")
        rows = "".join(
            f"<tr><td class='num'>{s}{accepting if self.dfa.accepting[s] else ''}</td>"
            f"<td><code>{escape(bytes_label(v, limit=99)[0])}</code></td>"
            f"<td class='num'>{t}{accepting if self.dfa.accepting[t] else ''}</td></tr>"
            for (s, t), v in sorted(dfa_edges(self.dfa).items()))
        summary = _("Las aristas, en texto")
        head = header_cells(_("desde|bytes|hasta"))
        return ('<details class="dfa-transitions" style="font-size:0.85rem">'
                f'<summary>{summary}</summary>'
                '<table class="compact-table" data-testid="dfa-transitions"><thead><tr>'
                f'{head}'
                f'</tr></thead><tbody>{rows}</tbody></table></details>')

    def _repr_html_(self) -> str:
        caption = f"<code>{escape(self.title)}</code>: " if self.title else ""
        text = _("{states} estados, {accepting} de aceptación (círculo doble); la flecha sin origen entra "
                 "en el estado inicial 0. Cada arista lleva los bytes que la recorren: los de ASCII "
                 "visibles tal cual, los demás en hexadecimal.").format(
                     states=self.dfa.n_states, accepting=sum(self.dfa.accepting))
        region_label = _("Diagrama del autómata")
        return styled(f'<figure class="dfa-figure"><div class="table-scroll" tabindex="0" role="region" '
                      f'aria-label="{escape(region_label)}">{self.svg()}</div>'
                      f'<figcaption>{caption}{text}</figcaption>' + self.transitions_html() + '</figure>')


# ---------------------------------------------------------------- tokens cross transitions

@dataclass
class Crossing:
    """One allowed token from a state: its id, the states it walks through (``path``, from the
    starting state to where it ends: len(bytes) edges) and whether it ends inside a character."""
    token: int
    piece: bytes
    path: list[int]

    @property
    def edges(self) -> int:
        """Transitions the token crosses: its length in bytes."""
        return len(self.path) - 1

    @property
    def partial(self) -> bool:
        """Whether the token ends in the middle of a UTF-8 character."""
        return is_partial(self.piece)


def crossings(dfa, vocab: list[bytes], state: int = 0) -> list[Crossing]:
    """Every token allowed from ``state`` of a ``masker.dfa.Dfa`` with the states its bytes walk
    through, most edges first (ties by token id). A token is allowed when every byte keeps the DFA
    alive (the masker's rule)."""
    out = []
    for t, piece in enumerate(vocab):
        path, s = [state], state
        for b in piece:
            s = dfa.step(s, b)
            if s is None:
                break
            path.append(s)
        else:
            if piece:
                out.append(Crossing(t, piece, path))
    out.sort(key=lambda c: (-c.edges, c.token))
    return out


class CrossingTable:
    """The tokens allowed after ``prefix`` with the DFA states each one walks, most edges first
    (``limit`` rows, and the rows tied with the last of them: :meth:`shown`). Test hook:
    ``[data-testid=crossings]`` with ``data-allowed`` and ``data-shown``."""

    def __init__(self, grammar, vocab: list[bytes], prefix: str | bytes = b"", limit: int = 8):
        data = prefix.encode("utf-8") if isinstance(prefix, str) else bytes(prefix)
        matcher = grammar.matcher(vocab)
        matcher.consume_bytes(data)
        self.prefix, self.vocab, self.limit = data, vocab, limit
        self.rows = crossings(grammar.automaton, vocab, matcher.state)

    def shown(self) -> list[Crossing]:
        """The rows shown: the first ``limit``, and every row tied in edges with the last of them
        (so that «the ones that cross the most edges» is true of the rows shown)."""
        if len(self.rows) <= self.limit:
            return list(self.rows)
        cut = self.rows[self.limit - 1].edges
        return [c for i, c in enumerate(self.rows) if i < self.limit or c.edges == cut]

    def _repr_html_(self) -> str:
        shown = self.shown()
        yes = _("sí")
        rows = "".join(
            f"<tr><td>{token_html(self.vocab, c.token)}</td><td class='num'>{c.edges}</td>"
            f"<td>{' → '.join(map(str, c.path))}</td><td>{yes if c.partial else ''}</td></tr>"
            for c in shown)
        which = (_("todos, de más a menos aristas") if len(shown) == len(self.rows)
                 else _("los {n} que recorren más aristas (con los empates)").format(n=fmt_int(len(shown))))
        caption = _("Tras «{prefix}»: {n} tokens permitidos; {which}").format(
            prefix=escape(token_label(self.prefix)), n=fmt_int(len(self.rows)), which=which)
        region_label = _("Tokens y aristas")
        head = header_cells(_("token|aristas|estados|acaba a mitad de carácter"))
        return styled(
            f'<div class="table-scroll" tabindex="0" role="region" aria-label="{escape(region_label)}" '
            f'data-testid="crossings" data-allowed="{len(self.rows)}" data-shown="{len(shown)}">'
            '<table class="compact-table">'
            f'<caption>{caption}</caption><thead><tr>'
            f'{head}</tr></thead><tbody>'
            + rows + "</tbody></table></div>")
