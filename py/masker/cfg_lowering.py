"""Lowering GBNF rules to productions over byte terminals, for the Earley recognizer.

Input: rule name -> ``grammar_ast`` tree (``gbnf_parse.py``). Output: ``(prods, terminals,
nullable)`` in the form ``earley.EarleyAutomaton`` takes: production 0 is ``START -> root``;
right-hand-side symbols >= 0 are nonterminals, ``~t`` is terminal t, a 256-bit int byte mask.
"""

from __future__ import annotations

from .errors import GrammarSyntaxError, LimitExceeded
from .grammar_ast import Alt, Chars, Ref, Repeat, Seq, literal_text
from .literal_dfa import literal_set_dfa
from .utf8 import utf8_sequences

DEFAULT_MAX_PRODUCTIONS = 100_000
SMALL_REPEAT = 8  # counts up to this are written out; larger ones use doubling helpers
LITERAL_SET_MIN = 256  # alternations with this many literal texts are lowered as their DFA


class Lowering:
    """Rules -> productions ``(lhs, rhs)`` over byte terminals, for Earley.

    ``x*`` becomes a left-recursive helper ``R -> | R x`` (constant Earley work per repetition);
    ``x{m,n}`` becomes m copies then 0..n-m copies, both with O(log n) helpers for large counts
    (``exactly``, ``up_to``); a code-point set becomes its UTF-8 byte sequences; 256 or
    more literal texts among an alternation's branches become their minimal DFA
    (``literals``).
    Unproductive productions are removed at the end.
    """

    def __init__(self, rules: dict, max_productions: int, text: str):
        self.rules, self.max_productions, self.text = rules, max_productions, text
        self.ids = {"$start": 0}
        for name in rules:
            self.ids[name] = len(self.ids)
        self.prods: list[tuple[int, tuple]] = [(0, (self.ids["root"],))]
        self.terminals: list[int] = []
        self.term_ids: dict[int, int] = {}
        self.char_nts: dict[tuple, int] = {}
        self.char_syms: dict[tuple, list[int]] = {}  # ranges -> their symbols
        self.helpers: dict[tuple, int] = {}  # repetition helpers, shared per (x, kind, count)
        self.memo: dict[int, list[int]] = {}  # id(node) -> its symbols
        self.keep: list = []

    def new_nt(self) -> int:
        self.ids[f"${len(self.ids)}"] = len(self.ids)
        return len(self.ids) - 1

    def add(self, lhs: int, rhs) -> None:
        if len(self.prods) >= self.max_productions:
            raise LimitExceeded("the grammar lowers to too many productions", "max_productions",
                                self.max_productions, "lower {m,n} bounds or simplify rules")
        self.prods.append((lhs, tuple(rhs)))

    def terminal(self, lo: int, hi: int) -> int:
        mask = ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)
        if mask not in self.term_ids:
            self.term_ids[mask] = len(self.terminals)
            self.terminals.append(mask)
        return ~self.term_ids[mask]

    def symbols(self, node) -> list[int]:
        """The right-hand-side symbols deriving ``node``; a node object met again (a shared
        sub-expression) reuses its symbols, so it is lowered once."""
        if isinstance(node, (Seq, Alt, Repeat)):
            found = self.memo.get(id(node))
            if found is None:
                found = self.memo[id(node)] = self._symbols(node)
                self.keep.append(node)  # ids stay valid while memoized
            return found
        return self._symbols(node)

    def _symbols(self, node) -> list[int]:
        if isinstance(node, Ref):
            return [self.ids[node.name]]
        if isinstance(node, Seq):
            return [s for item in node.items for s in self.symbols(item)]
        if isinstance(node, Chars):
            return self.chars(node.ranges)
        if isinstance(node, Alt):
            nt = self.new_nt()
            for rhs in self.branches(node):
                self.add(nt, rhs)
            return [nt]
        return self.repeat(node)

    def branches(self, node: Alt) -> list[list[int]]:
        """The right-hand sides of an alternation: ``LITERAL_SET_MIN`` or more literal texts
        among the branches are gathered into one ``literals`` nonterminal, the others lowered
        one by one (fewer texts stay one production each: Earley scans them all, which is
        cheap for a few, and the set's DFA would need more productions)."""
        if len(node.items) < LITERAL_SET_MIN:
            return [self.symbols(item) for item in node.items]
        texts = [literal_text(item) for item in node.items]
        found = [t for t in texts if t is not None]
        if len(found) < LITERAL_SET_MIN:
            return [self.symbols(item) for item in node.items]
        return [self.literals(found)] + [
            self.symbols(item) for item, t in zip(node.items, texts) if t is None]

    def literals(self, texts: list[bytes]) -> list[int]:
        """An alternation of literal texts (an enum) as the minimal DFA of the set
        (``literal_dfa.py``), one nonterminal per state that branches, with the terminals of
        non-branching runs written in line: Earley then scans the few bytes that can follow a
        prefix, not every text that starts with it."""
        dfa, _ = literal_set_dfa(texts)
        bytes_of: dict[int, list[int]] = {}
        for b, c in enumerate(dfa.byte_class[:256]):
            bytes_of.setdefault(c, []).append(b)
        moves = [[(b, t) for c, t in enumerate(row) if t >= 0 for b in bytes_of[c]]
                 for row in dfa.table]
        nts: dict[int, int] = {}
        todo = [0]
        nts[0] = self.new_nt()
        while todo:
            q = todo.pop()
            if dfa.accepting[q]:
                self.add(nts[q], [])
            for b, t in moves[q]:
                rhs = [self.terminal(b, b)]
                while not dfa.accepting[t] and len(moves[t]) == 1:  # a run: write it in line
                    b2, t = moves[t][0]
                    rhs.append(self.terminal(b2, b2))
                if moves[t]:
                    if t not in nts:
                        nts[t] = self.new_nt()
                        todo.append(t)
                    rhs.append(nts[t])
                self.add(nts[q], rhs)
        return [nts[0]]

    def chars(self, ranges) -> list[int]:
        found = self.char_syms.get(ranges)
        if found is None:
            found = self.char_syms[ranges] = self._chars(ranges)
        return found

    def _chars(self, ranges) -> list[int]:
        sequences = utf8_sequences(ranges)
        if len(sequences) == 1:
            return [self.terminal(lo, hi) for lo, hi in sequences[0]]
        if ranges not in self.char_nts:
            nt = self.char_nts[ranges] = self.new_nt()
            for sequence in sequences:  # none at all: nt stays unproductive and is pruned
                self.add(nt, [self.terminal(lo, hi) for lo, hi in sequence])
        return [self.char_nts[ranges]]

    def repeat(self, node: Repeat) -> list[int]:
        x = self.symbols(node.item)
        out = self.exactly(x, node.lo)
        if node.hi is None:
            star = self.new_nt()
            self.add(star, [])
            self.add(star, [star] + x)
            return out + [star]
        return out + self.up_to(x, node.hi - node.lo)

    def exactly(self, x: list[int], m: int) -> list[int]:
        """Symbols deriving exactly m copies of x: inline when small, else one doubling
        nonterminal per set bit of m (E_j -> E_j-1 E_j-1 derives 2^j copies)."""
        if m <= SMALL_REPEAT:
            return x * m
        return [self.power(x, j) for j in range(m.bit_length()) if m >> j & 1]

    def power(self, x: list[int], j: int) -> int:
        key = (tuple(x), "E", j)
        if key not in self.helpers:
            nt = self.helpers[key] = self.new_nt()
            self.add(nt, x if j == 0 else [self.power(x, j - 1)] * 2)
        return self.helpers[key]

    def up_to(self, x: list[int], n: int) -> list[int]:
        """Symbols deriving 0..n copies of x, unambiguously. Small n: a chain of optional
        helpers. Large n: U(n) -> U(h-1) | E(h) U(n-h) with h the largest power of two <= n
        (the two branches cover lengths 0..h-1 and h..n), so O(log n) helpers, not n."""
        if n == 0:
            return []
        key = (tuple(x), "U", n)
        if key not in self.helpers:
            nt = self.helpers[key] = self.new_nt()
            if n <= SMALL_REPEAT:
                self.add(nt, [])
                self.add(nt, x + self.up_to(x, n - 1))
            else:
                h = 1 << (n.bit_length() - 1)
                self.add(nt, self.up_to(x, h - 1))
                self.add(nt, [self.power(x, h.bit_length() - 1)] + self.up_to(x, n - h))
        return [self.helpers[key]]

    def run(self):
        for name, node in self.rules.items():
            for rhs in self.branches(node) if isinstance(node, Alt) else [self.symbols(node)]:
                self.add(self.ids[name], rhs)
        prods = _productive_only(self.prods)
        if not prods or prods[0][0] != 0:
            raise GrammarSyntaxError(self.text, 0, "the grammar matches no text at all (root "
                                     "never finishes)", "give every recursive rule a base case")
        return prods, self.terminals, _nullable(prods)


def _productive_only(prods):
    productive: set[int] = set()
    changed = True
    while changed:
        changed = False
        for lhs, rhs in prods:
            if lhs not in productive and all(s < 0 or s in productive for s in rhs):
                productive.add(lhs)
                changed = True
    return [(lhs, rhs) for lhs, rhs in prods if all(s < 0 or s in productive for s in rhs)
            and lhs in productive]


def _nullable(prods) -> set[int]:
    nullable: set[int] = set()
    changed = True
    while changed:
        changed = False
        for lhs, rhs in prods:
            if lhs not in nullable and all(s >= 0 and s in nullable for s in rhs):
                nullable.add(lhs)
                changed = True
    return nullable
