"""Lowering GBNF rules to productions over byte terminals, for the Earley recognizer.

Input: rule name -> ``grammar_ast`` tree (``gbnf_parse.py``). Output: ``(prods, terminals,
nullable, lexemes)`` in the form ``earley.EarleyAutomaton`` takes: production 0 is
``START -> root``; right-hand-side symbols >= 0 are nonterminals, ``~t`` is terminal t, a
256-bit int byte mask; ``lexemes`` maps some nonterminals to a minimal DFA that recognizes
them.

Lexemes: a part of a rule that uses no recursive rule (a JSON string with its quotes, a
number, a regular rule used by a recursive one) is a regular language. It becomes one
nonterminal whose texts a DFA recognizes (``regex_fsm.ast_to_dfa``), so the Earley sets inside
it hold one item that carries a DFA state, not the dozen items of its productions, and the
trie walk steps that DFA (regular sub-grammars run as automata inside the parser, as in
XGrammar and llguidance). Literal texts and one-sequence character sets stay byte terminals:
as a DFA they would save nothing. A part larger than ``LEXEME_MAX_SIZE`` code-point sets or
``LEXEME_MAX_DEPTH`` levels, whose DFA passes ``LEXEME_MAX_STATES``, or met after the
grammar's ``LEXEME_BUDGET`` is spent, is lowered to productions as before. The language is
the same either way (the tests compare both).
"""

from __future__ import annotations

from .errors import GrammarSyntaxError, LimitExceeded
from .grammar_ast import Alt, Chars, Ref, Repeat, Seq, literal_text, measure
from .literal_dfa import literal_set_dfa
from .regex_fsm import ast_to_dfa
from .utf8 import utf8_sequences

DEFAULT_MAX_PRODUCTIONS = 100_000
# A lexeme's size: code-point sets after expanding its repetitions, syntax-tree depth (its DFA
# is built by recursion) and DFA states (a set of literal texts may need more: one per byte).
# Small, so that a part whose DFA would be too large fails fast (its parts are then tried one
# by one): a JSON string of maxLength 10 is 213 states.
LEXEME_MAX_SIZE = 2_000
LEXEME_MAX_DEPTH = 120
LEXEME_MAX_STATES = 500
# Building a DFA costs milliseconds even for a small part, so one grammar's lexemes may take
# this many code-point sets in all (tried, built or not; a DFA built by an earlier grammar
# is free); the parts met after that are lowered to productions. Five strings of maxLength
# 10 fit.
LEXEME_BUDGET = 1_000
# Lexeme DFAs by tree, shared by every grammar compiled in this process (the JSON string,
# number and key of every schema are the same trees): the oldest goes when it is full.
# A Dfa is never changed once built. None: the tree's DFA passed LEXEME_MAX_STATES.
MAX_CACHED_DFAS = 512
_DFAS: dict = {}
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

    def __init__(self, rules: dict, max_productions: int, text: str,
                 regular: dict | None = None):
        """``regular``: the rules that reach no recursive rule, each with its (size, depth)
        once inlined (``cfg.py``); parts made of them and of terminals become lexemes. None:
        no lexemes at all."""
        self.rules, self.max_productions, self.text = rules, max_productions, text
        self.use_lexemes, self.regular = regular is not None, regular or {}
        self.lexemes: dict[int, object] = {}  # nonterminal -> its Dfa
        self.regular_memo: dict[int, bool] = {}  # id(node) -> uses only regular rules
        self.expanded: dict[str, object] = {}  # regular rule -> its tree, references inlined
        self.todo: list[str] = []  # rules to lower to productions (``run``)
        self.lexeme_of: dict = {}  # key(part) -> its lexeme nonterminal (None: no DFA)
        self.budget = LEXEME_BUDGET  # code-point sets that lexemes may still take
        self.sizes: dict = {}  # id(node) -> measure(node), for lexemes
        self.keys: dict = {}   # id(node) -> key(node)
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
                                self.max_productions, "lower {m,n} bounds or simplify rules",
                                code="limit.productions")
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
                found = self.memo[id(node)] = (
                    None if isinstance(node, Seq) else self.lexeme(node)) or self._symbols(node)
                self.keep.append(node)  # ids stay valid while memoized
            return found
        return self._symbols(node)

    def _symbols(self, node) -> list[int]:
        if isinstance(node, Ref):
            if node.name in self.regular:
                key = ("rule", node.name)
                if key not in self.helpers:
                    found = self.lexeme(node)
                    if not found:  # too large for a DFA: its productions after all
                        self.todo.append(node.name)
                    self.helpers[key] = found[0] if found else self.ids[node.name]
                return [self.helpers[key]]
            return [self.ids[node.name]]
        if isinstance(node, Seq):
            return self.sequence(node)
        if isinstance(node, Chars):
            return self.chars(node.ranges)
        if isinstance(node, Alt):
            nt = self.new_nt()
            for rhs in self.branches(node):
                self.add(nt, rhs)
            return [nt]
        return self.repeat(node)

    def sequence(self, node: Seq) -> list[int]:
        """The symbols of a sequence. With lexemes, each run of regular parts that are more
        than literal text (a string's characters, a number) becomes one lexeme together with
        the one literal code point on each side, when there is one (the quotes around a
        string's characters): the lexeme's DFA is then not accepting until the closing quote,
        so inside the string the trie walk never leaves the DFA, and equal strings in other
        places share the lexeme. The literal text further out stays byte terminals, so keys
        and punctuation make no lexeme of their own."""
        flat: list = []
        for item in node.items:
            is_text = isinstance(item, Seq) and literal_text(item) is not None
            flat.extend(item.items if is_text else (item,))
        if not self.use_lexemes:
            return [s for item in flat for s in self.symbols(item)]
        core = [self.is_regular(it) and not _plain(it) for it in flat]
        edge = [isinstance(it, Chars) and len(it.ranges) == 1 and it.ranges[0][0] == it.ranges[0][1]
                for it in flat]
        out, k, free = [], 0, 0  # free: the first item no lexeme has taken
        while k < len(flat):
            if not core[k]:
                k += 1
                continue
            j = k
            while j + 1 < len(flat) and core[j + 1]:
                j += 1
            lo = k - 1 if k > free and edge[k - 1] else k
            hi = j + 1 if j + 1 < len(flat) and edge[j + 1] else j
            found = self.lexeme(flat[lo] if lo == hi else Seq(tuple(flat[lo:hi + 1])))
            if found:
                out += [s for item in flat[free:lo] for s in self.symbols(item)] + found
                free = hi + 1
            k = hi + 1
        return out + [s for item in flat[free:] for s in self.symbols(item)]

    def is_regular(self, node) -> bool:
        """True when ``node`` refers only to regular rules (no recursion below it)."""
        found = self.regular_memo.get(id(node))
        if found is None:
            if isinstance(node, Ref):
                found = node.name in self.regular
            elif isinstance(node, Chars):
                found = True
            elif isinstance(node, Repeat):
                found = self.is_regular(node.item)
            else:
                found = all(self.is_regular(item) for item in node.items)
            self.regular_memo[id(node)] = found
            self.keep.append(node)
        return found

    def lexeme(self, node) -> list[int] | None:
        """``[nt]``, a new nonterminal recognized by the minimal DFA of ``node``, when ``node``
        is regular, is more than a literal text or a one-sequence character set, and its DFA
        stays within the limits above; else None (``node`` is lowered to productions)."""
        if not self.use_lexemes or not self.is_regular(node) or _plain(node):
            return None
        self.keep.append(node)  # the memos below are by id
        size, depth = measure(node, self.regular, self.sizes)
        if size > LEXEME_MAX_SIZE or depth > LEXEME_MAX_DEPTH:
            return None
        key = self.key(node)
        if key not in self.lexeme_of:  # equal trees (a string type used twice): one lexeme
            dfa = _DFAS.get(key, False)
            if dfa is False:  # never built: build it, if the budget allows
                if size > self.budget:
                    return None
                self.budget -= size
                try:
                    dfa = ast_to_dfa(self.expand(node), max_states=LEXEME_MAX_STATES,
                                     count_above=None)
                except LimitExceeded:
                    dfa = None
                if len(_DFAS) >= MAX_CACHED_DFAS:
                    _DFAS.pop(next(iter(_DFAS)))
                _DFAS[key] = dfa
            self.lexeme_of[key] = None if dfa is None else self.new_nt()
            if dfa is not None:
                self.lexemes[self.lexeme_of[key]] = dfa
        nt = self.lexeme_of[key]
        return None if nt is None else [nt]

    def key(self, node) -> str:
        """A text that equal trees (references inlined) share and others do not: the key of
        lexemes and of their DFAs. A str, so its hash is computed once."""
        found = self.keys.get(id(node))
        if found is None:
            if isinstance(node, Ref):
                found = self.key(self.rules[node.name])
            elif isinstance(node, Chars):
                found = "[" + ",".join(f"{lo:x}-{hi:x}" for lo, hi in node.ranges) + "]"
            elif isinstance(node, Repeat):
                found = f"({self.key(node.item)}){{{node.lo},{'' if node.hi is None else node.hi}}}"
            else:
                found = ("(" if isinstance(node, Seq) else "<") + " ".join(
                    self.key(item) for item in node.items) + ")"
            self.keys[id(node)] = found
            self.keep.append(node)
        return found

    def expand(self, node):
        """``node`` with its references to regular rules replaced by their trees."""
        if isinstance(node, Ref):
            found = self.expanded.get(node.name)
            if found is None:
                found = self.expanded[node.name] = self.expand(self.rules[node.name])
            return found
        if isinstance(node, Seq):
            return Seq(tuple(self.expand(item) for item in node.items))
        if isinstance(node, Alt):
            return Alt(tuple(self.expand(item) for item in node.items))
        if isinstance(node, Repeat):
            return Repeat(self.expand(node.item), node.lo, node.hi)
        return node

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
        """Lower every rule (a regular rule only when a reference could not make it a lexeme:
        ``self.todo`` grows while it is read, so no Python recursion follows references)."""
        self.todo = [name for name in self.rules
                     if name == "root" or not self.use_lexemes or name not in self.regular]
        done: set[str] = set()
        for name in self.todo:
            if name in done:
                continue
            done.add(name)
            node = self.rules[name]
            for rhs in self.branches(node) if isinstance(node, Alt) else [self.symbols(node)]:
                self.add(self.ids[name], rhs)
        lexemes = {nt: dfa for nt, dfa in self.lexemes.items() if any(dfa.accepting)}
        prods = _productive_only(self.prods, set(lexemes))
        if not prods or prods[0][0] != 0:
            raise GrammarSyntaxError(self.text, 0, "the grammar matches no text at all (root "
                                     "never finishes)", "give every recursive rule a base case",
                                     code="gbnf.never_finishes")
        return (prods, self.terminals,
                _nullable(prods, {nt for nt, dfa in lexemes.items() if dfa.accepting[0]}),
                lexemes)


def _plain(node) -> bool:
    """A literal text or a character set of one UTF-8 sequence: byte terminals already."""
    if literal_text(node) is not None:
        return True
    return isinstance(node, Chars) and len(utf8_sequences(node.ranges)) == 1


def _productive_only(prods, productive: set[int]):
    changed = True
    while changed:
        changed = False
        for lhs, rhs in prods:
            if lhs not in productive and all(s < 0 or s in productive for s in rhs):
                productive.add(lhs)
                changed = True
    return [(lhs, rhs) for lhs, rhs in prods if all(s < 0 or s in productive for s in rhs)
            and lhs in productive]


def _nullable(prods, nullable: set[int]) -> set[int]:
    changed = True
    while changed:
        changed = False
        for lhs, rhs in prods:
            if lhs not in nullable and all(s >= 0 and s in nullable for s in rhs):
                nullable.add(lhs)
                changed = True
    return nullable
