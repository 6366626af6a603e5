"""``compile_cfg``: a GBNF grammar -> DFA (when it is regular) or byte-level Earley recognizer.

Steps: parse (``gbnf_parse.py``) -> check references -> if no rule reachable from ``root`` is
recursive, inline every rule into one syntax tree and build a minimal DFA (``regex_fsm``), which
gives cached masks in O(1); otherwise (or when the DFA would be too large) lower the rules to
productions over byte terminals and run Earley (``earley.py``), with masks cached per Earley-state
key. Both routes accept the same language (a test forces each route on the same grammars).
"""

from __future__ import annotations

from .cfg_lowering import DEFAULT_MAX_PRODUCTIONS, Lowering
from .dfa import DEFAULT_MAX_DFA_STATES
from .earley import DEFAULT_MAX_ITEMS, EarleyAutomaton
from .errors import GrammarSyntaxError, LimitExceeded, nesting_guard
from .gbnf_parse import parse_gbnf
from .grammar_ast import Alt, Chars, Ref, Repeat, Seq, measure
from .matcher import Grammar, check_nonempty, gc_paused
from .regex_fsm import ast_to_dfa

MAX_INLINE_SIZE = 10_000  # code-point sets after inlining; larger regular grammars use Earley
MAX_INLINE_DEPTH = 120    # syntax-tree depth after inlining (the NFA builder recurses on it)


def compile_cfg(text: str, *, engine: str = "auto", max_states: int = DEFAULT_MAX_DFA_STATES,
                max_items: int = DEFAULT_MAX_ITEMS,
                max_productions: int = DEFAULT_MAX_PRODUCTIONS, lexemes: bool = True) -> Grammar:
    """Compile GBNF text (start rule ``root``) into a ``Grammar``.

    ``engine``: "auto" (a DFA when no rule reachable from root is recursive and the DFA stays
    under ``max_states``, else Earley), "dfa" (raises GrammarSyntaxError when a reachable rule
    is recursive) or "earley". Limits: ``max_states`` DFA states and ``max_productions``
    (compile time), ``max_items`` Earley items per input byte (run time). ``lexemes``: on the
    Earley route, run the parts that use no recursive rule as DFAs inside the items
    (``cfg_lowering``; False lowers every part to productions: the same language, slower
    masks, for comparisons). Raises, at compile
    time, GrammarSyntaxError (syntax, missing ``root``, undefined or duplicate rule, empty
    language), UnsupportedFeature and LimitExceeded (including "nests too deeply").
    """
    if engine not in ("auto", "dfa", "earley"):
        raise ValueError(f"engine must be 'auto', 'dfa' or 'earley', got {engine!r}")
    with nesting_guard("grammar"), gc_paused():
        automaton = _compile(text, engine, max_states, max_items, max_productions, lexemes)
    return check_nonempty(Grammar(automaton, "cfg", text), text, "grammar")


def compile_cfg_rules(rules: dict, source: str, *, engine: str = "auto",
                      max_states: int = DEFAULT_MAX_DFA_STATES, max_items: int = DEFAULT_MAX_ITEMS,
                      max_productions: int = DEFAULT_MAX_PRODUCTIONS,
                      lexemes: bool = True) -> Grammar:
    """``compile_cfg`` for rules already parsed: ``rules`` maps rule names to ``grammar_ast``
    trees (``Ref(name, pos)`` for references; "root" is the start), as ``parse_gbnf`` returns
    them; ``source`` is the GBNF text they stand for (kept as the grammar's source and shown
    in errors). Nodes shared between places (the same object) are lowered once. Same engines,
    limits and errors as ``compile_cfg``."""
    if engine not in ("auto", "dfa", "earley"):
        raise ValueError(f"engine must be 'auto', 'dfa' or 'earley', got {engine!r}")
    with nesting_guard("grammar"), gc_paused():
        automaton = _compile_rules(rules, {}, source, engine, max_states, max_items,
                                   max_productions, lexemes)
    return check_nonempty(Grammar(automaton, "cfg", source), source, "grammar")


def _compile(text, engine, max_states, max_items, max_productions, lexemes):
    rules, positions = parse_gbnf(text)
    return _compile_rules(rules, positions, text, engine, max_states, max_items,
                          max_productions, lexemes)


def _compile_rules(rules, positions, text, engine, max_states, max_items, max_productions,
                   lexemes):
    if "root" not in rules:
        raise GrammarSyntaxError(text, 0, "no rule named 'root' (the start rule)",
                                 "add `root ::= ...`", code="gbnf.no_root")
    _check_references(text, rules)
    order, recursive = _rule_order(rules)
    if engine == "dfa" and recursive:
        raise GrammarSyntaxError(text, positions.get(recursive, 0), f"rule {recursive!r} is recursive, "
                                 "so the grammar has no DFA", "use engine='auto' or 'earley'",
                                 code="gbnf.recursive_no_dfa", name=recursive)
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
        regular = _regular_rules(rules, order) if lexemes else None
        prods, terminals, nullable, dfas = Lowering(rules, max_productions, text, regular).run()
        automaton = EarleyAutomaton(prods, terminals, nullable, max_items, dfas)
    return automaton


def _regular_rules(rules: dict, order: list[str]) -> dict[str, tuple[int, int]]:
    """The rules that reach no recursive rule, each with its (size, depth) once inlined
    (``measure``). ``order`` lists each rule after the rules it uses (``_rule_order``), except
    on a cycle, where a rule comes before one it uses: so one pass, in order, finds a rule
    regular when every rule it uses was found regular before."""
    regular: dict[str, tuple[int, int]] = {}
    for name in order:
        if all(ref.name in regular for ref in _refs(rules[name])):
            regular[name] = measure(rules[name], regular)
    return regular


def _refs(node):
    """The ``Ref`` nodes under ``node`` (iterative: no recursion, no generator per node)."""
    out, todo = [], [node]
    while todo:
        n = todo.pop()
        if isinstance(n, Ref):
            out.append(n)
        elif isinstance(n, (Seq, Alt)):
            todo.extend(it for it in n.items if not isinstance(it, Chars))
        elif isinstance(n, Repeat):
            todo.append(n.item)
    return out


def _check_references(text: str, rules: dict) -> None:
    """Raises GrammarSyntaxError on a reference to an undefined rule."""
    for node in rules.values():
        for ref in _refs(node):
            if ref.name not in rules:
                raise GrammarSyntaxError(text, ref.pos, f"rule {ref.name!r} is used but never "
                                         "defined", f"add `{ref.name} ::= ...` or fix the name",
                                         code="gbnf.undefined_rule", name=ref.name)


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
    stats: dict[str, tuple[int, int]] = {}
    for name in order:
        stats[name] = measure(rules[name], stats)
    return stats["root"]


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
