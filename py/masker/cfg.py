"""``compile_cfg``: a GBNF grammar -> DFA (when it is regular) or byte-level Earley recognizer.

Steps: parse (``gbnf_parse.py``) -> check references -> if no rule reachable from ``root`` is
recursive, inline every rule into one syntax tree and build a minimal DFA (``regex_fsm``), which
gives cached masks in O(1); otherwise (or when the DFA would be too large) lower the rules to
productions over byte terminals and run Earley (``earley.py``), with masks cached per Earley-state
key. Both routes accept the same language (a test forces each route on the same grammars).
"""

from __future__ import annotations

from .dfa import DEFAULT_MAX_DFA_STATES
from .earley import DEFAULT_MAX_ITEMS, EarleyAutomaton
from .errors import GrammarSyntaxError, LimitExceeded, nesting_guard
from .gbnf_parse import parse_gbnf
from .grammar_ast import Alt, Chars, Ref, Repeat, Seq
from .matcher import Grammar, check_nonempty
from .regex_fsm import ast_to_dfa
from .utf8 import utf8_sequences

DEFAULT_MAX_PRODUCTIONS = 100_000
MAX_INLINE_SIZE = 50_000  # code-point sets after inlining; larger regular grammars use Earley
MAX_INLINE_DEPTH = 120    # syntax-tree depth after inlining (the NFA builder recurses on it)


def compile_cfg(text: str, *, engine: str = "auto", max_states: int = DEFAULT_MAX_DFA_STATES,
                max_items: int = DEFAULT_MAX_ITEMS,
                max_productions: int = DEFAULT_MAX_PRODUCTIONS) -> Grammar:
    """Compile GBNF text (start rule ``root``) into a ``Grammar``.

    ``engine``: "auto" (a DFA when no rule reachable from root is recursive and the DFA stays
    under ``max_states``, else Earley), "dfa" (raises GrammarSyntaxError when a reachable rule
    is recursive) or "earley". Limits: ``max_states`` DFA states and ``max_productions``
    (compile time), ``max_items`` Earley items per input byte (run time). Raises, at compile
    time, GrammarSyntaxError (syntax, missing ``root``, undefined or duplicate rule, empty
    language), UnsupportedFeature and LimitExceeded (including "nests too deeply").
    """
    if engine not in ("auto", "dfa", "earley"):
        raise ValueError(f"engine must be 'auto', 'dfa' or 'earley', got {engine!r}")
    with nesting_guard("grammar"):
        automaton = _compile(text, engine, max_states, max_items, max_productions)
    return check_nonempty(Grammar(automaton, "cfg", text), text, "grammar")


def _compile(text, engine, max_states, max_items, max_productions):
    rules, positions = parse_gbnf(text)
    if "root" not in rules:
        raise GrammarSyntaxError(text, 0, "no rule named 'root' (the start rule)",
                                 "add `root ::= ...`")
    _check_references(text, rules)
    order, recursive = _rule_order(rules)
    if engine == "dfa" and recursive:
        raise GrammarSyntaxError(text, positions[recursive], f"rule {recursive!r} is recursive, "
                                 "so the grammar has no DFA", "use engine='auto' or 'earley'")
    automaton = None
    if engine != "earley" and not recursive:
        size, depth = _inline_stats(rules, order)
        if engine == "dfa" or (size <= MAX_INLINE_SIZE and depth <= MAX_INLINE_DEPTH):
            try:
                automaton = ast_to_dfa(_inline(rules, order), max_states=max_states)
            except LimitExceeded:
                if engine == "dfa":
                    raise
    if automaton is None:
        prods, terminals, nullable = _Lowering(rules, max_productions, text).run()
        automaton = EarleyAutomaton(prods, terminals, nullable, max_items)
    return automaton


def _refs(node):
    if isinstance(node, Ref):
        yield node
    elif isinstance(node, (Seq, Alt)):
        for item in node.items:
            yield from _refs(item)
    elif isinstance(node, Repeat):
        yield from _refs(node.item)


def _check_references(text: str, rules: dict) -> None:
    """Raises GrammarSyntaxError on a reference to an undefined rule."""
    for node in rules.values():
        for ref in _refs(node):
            if ref.name not in rules:
                raise GrammarSyntaxError(text, ref.pos, f"rule {ref.name!r} is used but never "
                                         "defined", f"add `{ref.name} ::= ...` or fix the name")


def _rule_order(rules: dict) -> tuple[list[str], str | None]:
    """Rules reachable from root, each after the rules it uses (iterative depth-first post-order),
    and the name of a rule on a reference cycle (None when the grammar is not recursive)."""
    colour: dict[str, int] = {"root": 1}
    order, cycle = [], None
    stack = [("root", iter(dict.fromkeys(r.name for r in _refs(rules["root"]))))]
    while stack:
        name, children = stack[-1]
        child = next(children, None)
        if child is None:
            colour[name] = 2
            order.append(name)
            stack.pop()
        elif colour.get(child) == 1:
            cycle = cycle or child
        elif not colour.get(child):
            colour[child] = 1
            stack.append((child, iter(dict.fromkeys(r.name for r in _refs(rules[child])))))
    return order, cycle


def _inline_stats(rules: dict, order: list[str]) -> tuple[int, int]:
    """(size, depth) of root once every rule is inlined: code-point sets after expanding
    repetitions, and syntax-tree depth. Rules are measured in ``order``, so no Python recursion
    follows rule references."""
    size: dict[str, int] = {}
    depth: dict[str, int] = {}

    def measure(node) -> tuple[int, int]:
        if isinstance(node, Chars):
            return 1, 1
        if isinstance(node, Ref):
            return size[node.name], depth[node.name]
        if isinstance(node, Repeat):
            n, d = measure(node.item)
            return n * (node.hi if node.hi is not None else max(node.lo, 1)), d + 1
        parts = [measure(item) for item in node.items]
        return sum(n for n, _ in parts), 1 + max((d for _, d in parts), default=0)

    for name in order:
        size[name], depth[name] = measure(rules[name])
    return size["root"], depth["root"]


def _inline(rules: dict, order: list[str]):
    memo: dict[str, object] = {}

    def expand(node):
        if isinstance(node, Ref):
            return memo[node.name]
        if isinstance(node, Seq):
            return Seq(tuple(expand(i) for i in node.items))
        if isinstance(node, Alt):
            return Alt(tuple(expand(i) for i in node.items))
        if isinstance(node, Repeat):
            return Repeat(expand(node.item), node.lo, node.hi)
        return node

    for name in order:
        memo[name] = expand(rules[name])
    return memo["root"]


class _Lowering:
    """Rules -> productions ``(lhs, rhs)`` over byte terminals, for Earley.

    ``x*`` becomes a left-recursive helper ``R -> | R x`` (constant Earley work per repetition);
    ``x{m,n}`` becomes m copies and a chain of optional helpers; a code-point set becomes its
    UTF-8 byte sequences. Unproductive productions are removed at the end.
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
        if isinstance(node, Ref):
            return [self.ids[node.name]]
        if isinstance(node, Seq):
            return [s for item in node.items for s in self.symbols(item)]
        if isinstance(node, Chars):
            return self.chars(node.ranges)
        if isinstance(node, Alt):
            nt = self.new_nt()
            for item in node.items:
                self.add(nt, self.symbols(item))
            return [nt]
        return self.repeat(node)

    def chars(self, ranges) -> list[int]:
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
        out = x * node.lo
        if node.hi is None:
            star = self.new_nt()
            self.add(star, [])
            self.add(star, [star] + x)
            return out + [star]
        tail = None
        for _ in range(node.hi - node.lo):
            opt = self.new_nt()
            self.add(opt, [])
            self.add(opt, x + ([tail] if tail is not None else []))
            tail = opt
        return out + ([tail] if tail is not None else [])

    def run(self):
        for name, node in self.rules.items():
            branches = node.items if isinstance(node, Alt) else (node,)
            for branch in branches:
                self.add(self.ids[name], self.symbols(branch))
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
