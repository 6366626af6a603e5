"""Intersection and difference of regular sub-grammars, exactly, by automata over characters.

JSON Schema's boolean keywords need more than a union: ``not`` is a complement, ``oneOf`` is
"this branch and none of the others", ``if``/``then``/``else`` is (if ∧ then) ∨ (¬if ∧ else).
Regular languages are closed under all of these, so when the parts are regular (no rule that
refers to itself) the result is exact:

1. each operand, an intermediate-form node (``ir.py``), becomes a Thompson NFA over code-point
   intervals, then a DFA by subset construction (Rabin and Scott 1959), trimmed to the states
   that can still accept and minimised (Moore's partition refinement);
2. the product construction pairs the two DFAs' states: intersection accepts where both
   accept, difference where the first accepts and the second does not (a missing move of the
   second is its dead state, which accepts nothing);
3. the product goes back to the intermediate form, so both emitters (regex and GBNF) write it
   as any other node: by state elimination (Brzozowski and McCluskey 1963) into one
   expression when it stays below ``max_size`` nodes, else as right-linear rules, one per
   state (``q ::= [a-c] q' | "d" q'' | ""``), which make the schema recursive, hence GBNF.

The alphabet is the code point, not the byte: the same languages as the byte DFAs the masker
compiles later (UTF-8 is a bijection), but the result can be written back as text over
characters, which is what a grammar's ``source`` shows.

A difference is exact only over texts that spell each value once: ``1`` and ``1.0`` are one
number, ``"a"`` and ``"\\u0061"`` one string, and a text the excluded grammar does not spell
would slip through. So before a difference the values of the first operand are narrowed to the
canonical spellings below (never wider than the spec), which every builder of the excluded
side also writes (``enum``/``const`` numbers include their canonical spelling, ``values.py``);
arrays are subtracted only as canonical arrays of canonical scalars, and objects, whose keys
come in any order, never as text: ``translate.py`` writes a difference over objects as
positive keywords (``Translator.object_violations``).

Errors: ``NotRegular`` when an operand reaches a rule that refers to itself, or one still being
translated (the caller refuses the keyword by name); ``TooLarge`` (with the number of states
reached) past ``max_states``. Both are internal: ``translate.py`` turns them into
``UnsupportedKeyword``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ir import EMPTY, NOTHING, Chars, Lit, Node, Ref, Repeat, Rules, Seq, alt, chars, repeat, seq
from .ir import Alt as AltNode

MAX_STATES = 4000  # NFA and DFA states, per operand and per product
MAX_SIZE = 20_000  # nodes of the expression written back before falling back to rules
MAX_ELIMINATED = 400  # states above which the DFA is written as rules directly
MAX_DEPTH = 60  # nesting of the expression above which it is written as rules (the emitters
# and the regex compiler recurse on it)


# The canonical spellings a difference works on (see the module docstring).
# Strings: what json.dumps(ensure_ascii=False) writes, without the control characters that have
# no short escape (a pattern or a format never writes those): raw characters, \" \\ and the
# short escapes of backspace, form feed, newline, carriage return and tab.
CANONICAL_STRING = seq(Lit('"'), repeat(alt(
    chars([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)]),
    *(Lit(e) for e in ('\\"', "\\\\", "\\b", "\\f", "\\n", "\\r", "\\t"))), 0, None),
    Lit('"'))
_DIGITS = repeat(chars([(48, 57)]), 0, None)
_NATURAL = seq(chars([(49, 57)]), _DIGITS)
# Numbers: integers without a sign on 0; other numbers with a fraction that ends in a non-zero
# digit; never an exponent.
CANONICAL_NUMBER = alt(
    Lit("0"), seq(alt(Lit("-"), EMPTY), _NATURAL),
    seq(alt(Lit("-"), EMPTY), alt(Lit("0"), _NATURAL), Lit("."), _DIGITS, chars([(49, 57)])))


class NotRegular(Exception):
    """An operand reaches the rule ``name``, which refers to itself (or is being translated)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


class TooLarge(Exception):
    """An automaton passed ``limit`` states (``states``: how many it had then)."""

    def __init__(self, states: int, limit: int):
        super().__init__(f"{states} states (limit {limit})")
        self.states, self.limit = states, limit


@dataclass
class CharDfa:
    """A DFA over code points. State 0 is the start; ``moves[q]`` is a sorted list of disjoint
    ``(lo, hi, target)`` intervals (a code point outside them is a dead move); every state can
    reach an accepting one, except in the empty DFA (one state, no move, not accepting)."""

    moves: list[list[tuple[int, int, int]]]
    accepting: list[bool]

    @property
    def n_states(self) -> int:
        return len(self.moves)

    def accepts(self, text: str) -> bool:
        """True when ``text`` is in the language (a reference for tests)."""
        q = 0
        for ch in text:
            cp = ord(ch)
            q = next((t for lo, hi, t in self.moves[q] if lo <= cp <= hi), -1)
            if q < 0:
                return False
        return self.accepting[q]


# ---- intermediate form -> NFA -> DFA ------------------------------------------------------

class _Nfa:
    def __init__(self, limit: int):
        self.moves: list[list[tuple[int, int, int]]] = []
        self.eps: list[list[int]] = []
        self.limit = limit

    def add(self) -> int:
        if len(self.moves) >= self.limit:
            raise TooLarge(len(self.moves) + 1, self.limit)
        self.moves.append([])
        self.eps.append([])
        return len(self.moves) - 1


def _splice(nfa: _Nfa, dfa: CharDfa, s: int) -> int:
    """Add a copy of ``dfa`` entered at ``s``; return its exit state."""
    states = [s] + [nfa.add() for _ in range(dfa.n_states - 1)]
    end = nfa.add()
    for q, row in enumerate(dfa.moves):
        nfa.moves[states[q]].extend((lo, hi, states[t]) for lo, hi, t in row)
        if dfa.accepting[q]:
            nfa.eps[states[q]].append(end)
    return end


def _build(nfa: _Nfa, node: Node, s: int, rules: Rules, open_rules: set[str],
           unfinished: frozenset[str], known: dict[str, CharDfa] | None = None) -> int:
    """Add ``node`` entered at ``s``; return its exit state. A reference to a rule of
    ``known`` (the right-linear rules of an earlier automaton) is that automaton."""
    if isinstance(node, Ref) and known and node.name in known:
        return _splice(nfa, known[node.name], s)
    if isinstance(node, Lit):
        for ch in node.text:
            t = nfa.add()
            nfa.moves[s].append((ord(ch), ord(ch), t))
            s = t
        return s
    if isinstance(node, Chars):
        t = nfa.add()
        nfa.moves[s].extend((lo, hi, t) for lo, hi in node.ranges)
        return t
    if isinstance(node, Seq):
        for item in node.items:
            s = _build(nfa, item, s, rules, open_rules, unfinished, known)
        return s
    if isinstance(node, AltNode):
        end = nfa.add()
        for item in node.items:
            nfa.eps[_build(nfa, item, s, rules, open_rules, unfinished, known)].append(end)
        return end
    if isinstance(node, Repeat):
        for _ in range(node.lo):
            s = _build(nfa, node.item, s, rules, open_rules, unfinished, known)
        if node.hi is None:
            loop = nfa.add()
            nfa.eps[s].append(loop)
            nfa.eps[_build(nfa, node.item, loop, rules, open_rules, unfinished, known)].append(loop)
            return loop
        end = nfa.add()
        for _ in range(node.hi - node.lo):
            nfa.eps[s].append(end)
            s = _build(nfa, node.item, s, rules, open_rules, unfinished, known)
        nfa.eps[s].append(end)
        return end
    if isinstance(node, Ref):
        if node.name in open_rules or node.name in unfinished:
            raise NotRegular(node.name)
        open_rules.add(node.name)
        try:
            return _build(nfa, rules[node.name], s, rules, open_rules, unfinished, known)
        finally:
            open_rules.discard(node.name)
    raise TypeError(f"unknown node {node!r}")


def _closure(nfa: _Nfa, states) -> frozenset[int]:
    seen, todo = set(states), list(states)
    while todo:
        for t in nfa.eps[todo.pop()]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return frozenset(seen)


def _split(moves: list[tuple[int, int, object]]) -> list[tuple[int, int, frozenset]]:
    """Disjoint intervals, each with the set of targets of the moves covering it (adjacent
    intervals with the same set merged)."""
    cuts = sorted({lo for lo, _, _ in moves} | {hi + 1 for _, hi, _ in moves})
    out: list[tuple[int, int, frozenset]] = []
    for a, b in zip(cuts, cuts[1:]):
        targets = frozenset(t for lo, hi, t in moves if lo <= a and b - 1 <= hi)
        if not targets:
            continue
        if out and out[-1][1] == a - 1 and out[-1][2] == targets:
            out[-1] = (out[-1][0], b - 1, targets)
        else:
            out.append((a, b - 1, targets))
    return out


def to_dfa(node: Node, rules: Rules, unfinished: frozenset[str] = frozenset(),
           max_states: int = MAX_STATES, known: dict[str, CharDfa] | None = None) -> CharDfa:
    """The minimal trimmed DFA of ``node`` (``rules`` resolve its references; a reference to a
    rule of ``known`` is that DFA). Raises NotRegular for a reference to a rule that refers to
    itself or is in ``unfinished``, TooLarge past ``max_states`` NFA or DFA states."""
    nfa = _Nfa(max_states)
    start = nfa.add()
    accept = _build(nfa, node, start, rules, set(), unfinished, known)
    first = _closure(nfa, [start])
    index, order = {first: 0}, [first]
    moves: list[list[tuple[int, int, int]]] = []
    for subset in order:  # grows while it is read
        row = []
        for lo, hi, targets in _split([m for s in subset for m in nfa.moves[s]]):
            nxt = _closure(nfa, targets)
            if nxt not in index:
                if len(order) >= max_states:
                    raise TooLarge(len(order) + 1, max_states)
                index[nxt] = len(order)
                order.append(nxt)
            row.append((lo, hi, index[nxt]))
        moves.append(row)
    return minimize(trim(CharDfa(moves, [accept in subset for subset in order])))


# ---- trimming, minimising ------------------------------------------------------------------

def trim(dfa: CharDfa) -> CharDfa:
    """The same language with only the states that are reachable and can still accept."""
    back: list[list[int]] = [[] for _ in range(dfa.n_states)]
    for q, row in enumerate(dfa.moves):
        for _, _, t in row:
            back[t].append(q)
    alive = {q for q in range(dfa.n_states) if dfa.accepting[q]}
    todo = list(alive)
    while todo:
        for p in back[todo.pop()]:
            if p not in alive:
                alive.add(p)
                todo.append(p)
    if 0 not in alive:
        return CharDfa([[]], [False])
    number, order = {0: 0}, [0]
    for q in order:
        for _, _, t in dfa.moves[q]:
            if t in alive and t not in number:
                number[t] = len(order)
                order.append(t)
    return CharDfa([[(lo, hi, number[t]) for lo, hi, t in dfa.moves[q] if t in alive]
                    for q in order], [dfa.accepting[q] for q in order])


def _merged(row: list[tuple[int, int, int]], block: list[int]) -> tuple:
    out: list[tuple[int, int, int]] = []
    for lo, hi, t in row:
        b = block[t]
        if out and out[-1][1] == lo - 1 and out[-1][2] == b:
            out[-1] = (out[-1][0], hi, b)
        else:
            out.append((lo, hi, b))
    return tuple(out)


def minimize(dfa: CharDfa) -> CharDfa:
    """Moore's partition refinement: states with the same future share one state."""
    block = [int(a) for a in dfa.accepting]
    count = len(set(block))
    while True:
        signatures: dict[tuple, int] = {}
        new = []
        for q in range(dfa.n_states):
            key = (block[q], _merged(dfa.moves[q], block))
            new.append(signatures.setdefault(key, len(signatures)))
        if len(signatures) == count:
            break
        block, count = new, len(signatures)
    rep: dict[int, int] = {}  # one state per block
    for q in range(dfa.n_states):
        rep.setdefault(block[q], q)
    number, order = {block[0]: 0}, [block[0]]  # blocks in order of discovery from the start
    for b in order:
        for _, _, t in dfa.moves[rep[b]]:
            if block[t] not in number:
                number[block[t]] = len(order)
                order.append(block[t])
    moves = [[(lo, hi, number[bt]) for lo, hi, bt in _merged(dfa.moves[rep[b]], block)]
             for b in order]
    return CharDfa(moves, [dfa.accepting[rep[b]] for b in order])


# ---- product -------------------------------------------------------------------------------

def product(a: CharDfa, b: CharDfa, op: str, max_states: int = MAX_STATES) -> CharDfa:
    """``op`` "and": the texts of both; "minus": the texts of ``a`` that ``b`` rejects. The
    result is trimmed and minimal. Raises TooLarge past ``max_states`` pairs."""
    if op not in ("and", "minus"):
        raise ValueError(f"op must be 'and' or 'minus', not {op!r}")
    index, order = {(0, 0): 0}, [(0, 0)]
    moves: list[list[tuple[int, int, int]]] = []
    for p, q in order:
        row_b = b.moves[q] if q >= 0 else []
        row = []
        for lo, hi, ta in a.moves[p]:
            parts = [(max(lo, lo2), min(hi, hi2), tb) for lo2, hi2, tb in row_b
                     if lo2 <= hi and lo <= hi2]
            if op == "minus":  # the gaps: b's dead state
                at, gaps = lo, []
                for x, y, _ in parts:
                    if x > at:
                        gaps.append((at, x - 1, -1))
                    at = y + 1
                if at <= hi:
                    gaps.append((at, hi, -1))
                parts = sorted(parts + gaps)
            for x, y, tb in parts:
                pair = (ta, tb)
                if pair not in index:
                    if len(order) >= max_states:
                        raise TooLarge(len(order) + 1, max_states)
                    index[pair] = len(order)
                    order.append(pair)
                row.append((x, y, index[pair]))
        moves.append(row)
    if op == "and":
        accepting = [a.accepting[p] and q >= 0 and b.accepting[q] for p, q in order]
    else:
        accepting = [a.accepting[p] and (q < 0 or not b.accepting[q]) for p, q in order]
    return minimize(trim(CharDfa(moves, accepting)))


# ---- DFA -> intermediate form ---------------------------------------------------------------

def _size(node: Node) -> int:
    if isinstance(node, (Seq, AltNode)):
        return 1 + sum(_size(it) for it in node.items)
    if isinstance(node, Repeat):
        return 1 + _size(node.item)
    return 1


def to_expression(dfa: CharDfa, max_size: int = MAX_SIZE,
                  max_states: int = MAX_ELIMINATED) -> Node | None:
    """The DFA's language as one expression (state elimination, the state with the fewest
    in-by-out edges first), or None when the DFA has more than ``max_states`` states or an
    intermediate expression passes ``max_size`` nodes."""
    if not any(dfa.accepting):
        return NOTHING
    n = dfa.n_states
    if n > max_states:
        return None
    start, final = n, n + 1
    edges: dict[tuple[int, int], Node] = {(start, 0): EMPTY}
    sizes: dict[tuple[int, int], int] = {(start, 0): 1}
    succ: dict[int, set[int]] = {q: set() for q in range(n + 2)}
    pred: dict[int, set[int]] = {q: set() for q in range(n + 2)}

    def put(p: int, r: int, node: Node, size: int) -> None:
        edges[(p, r)], sizes[(p, r)] = node, size
        succ[p].add(r)
        pred[r].add(p)

    put(start, 0, EMPTY, 1)
    for q, row in enumerate(dfa.moves):
        by_target: dict[int, list[tuple[int, int]]] = {}
        for lo, hi, t in row:
            by_target.setdefault(t, []).append((lo, hi))
        for t, ranges in by_target.items():
            put(q, t, chars(ranges), 1)
        if dfa.accepting[q]:
            put(q, final, EMPTY, 1)
    remaining = set(range(n))
    while remaining:
        k = min(remaining, key=lambda s: (len(pred[s] - {s}) * len(succ[s] - {s}), s))
        remaining.discard(k)
        loop = edges.pop((k, k), None)
        loop_size = sizes.pop((k, k), 0)
        star = repeat(loop, 0, None) if loop is not None else EMPTY
        ins = [(p, edges.pop((p, k)), sizes.pop((p, k))) for p in pred[k] if p != k]
        outs = [(r, edges.pop((k, r)), sizes.pop((k, r))) for r in succ[k] if r != k]
        for p, _, _ in ins:
            succ[p].discard(k)
        for r, _, _ in outs:
            pred[r].discard(k)
        succ[k], pred[k] = set(), set()
        for p, e_in, s_in in ins:
            for r, e_out, s_out in outs:
                size = s_in + loop_size + s_out + 2
                old = edges.get((p, r))
                if old is not None:
                    size += sizes[(p, r)] + 1
                if size > max_size:
                    return None
                new = seq(e_in, star, e_out)
                put(p, r, new if old is None else alt(old, new), size)
    return edges.get((start, final), NOTHING)


def to_rules(dfa: CharDfa, prefix: str, rules: Rules) -> Node:
    """The DFA as right-linear rules ``{prefix}-{q}`` added to ``rules`` (mutated); returns a
    reference to the start state's rule."""
    for q, row in enumerate(dfa.moves):
        by_target: dict[int, list[tuple[int, int]]] = {}
        for lo, hi, t in row:
            by_target.setdefault(t, []).append((lo, hi))
        branches = [seq(chars(ranges), Ref(f"{prefix}-{t}")) for t, ranges in by_target.items()]
        if dfa.accepting[q]:
            branches.append(EMPTY)
        rules[f"{prefix}-{q}"] = alt(*branches)
    return Ref(f"{prefix}-0")


def _depth(node: Node) -> int:
    """How deeply ``node``'s sequences, alternatives and repetitions nest."""
    deepest, todo = 0, [(node, 1)]
    while todo:
        item, depth = todo.pop()
        deepest = max(deepest, depth)
        if isinstance(item, (Seq, AltNode)):
            todo.extend((part, depth + 1) for part in item.items)
        elif isinstance(item, Repeat):
            todo.append((item.item, depth + 1))
    return deepest


def to_ir(dfa: CharDfa, prefix: str, rules: Rules, max_size: int = MAX_SIZE,
          known: dict[str, CharDfa] | None = None) -> Node:
    """The DFA as one expression when small and shallow enough, else as right-linear rules
    (recorded in ``known``, mutated, under the start rule's name, so a later automaton reuses
    the DFA)."""
    expression = to_expression(dfa, max_size)
    if expression is not None and _depth(expression) <= MAX_DEPTH:
        return expression
    start = to_rules(dfa, prefix, rules)
    if known is not None:
        known[start.name] = dfa
    return start
