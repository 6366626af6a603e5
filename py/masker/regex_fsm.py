"""``compile_regex`` and ``compile_choice``: patterns and finite sets of texts -> byte DFA.

Pipeline: text -> syntax tree (``regex_parse.py``) -> byte-level NFA (``nfa.py``) -> minimal DFA
(``dfa.py``) -> ``Grammar``. The same route serves non-recursive context-free grammars
(``cfg.py``), so every regular language shares one automaton class and one mask routine.
"""

from __future__ import annotations

from .counted import COUNT_ABOVE, CountedDfa
from .dfa import DEFAULT_MAX_DFA_STATES, Dfa, determinize
from .grammar_ast import Alt, Repeat, Seq, literal_text
from .literal_dfa import literal_set_dfa
from .errors import GrammarSyntaxError, LimitExceeded, nesting_guard
from .matcher import Grammar, check_nonempty, gc_paused
from .nfa import DEFAULT_MAX_NFA_STATES, build_nfa
from .regex_parse import parse_regex


def ast_to_dfa(node, *, max_states: int = DEFAULT_MAX_DFA_STATES,
               max_nfa_states: int = DEFAULT_MAX_NFA_STATES,
               count_above: int | None = COUNT_ABOVE) -> Dfa | CountedDfa:
    """Compile a ``grammar_ast`` tree without rule references into a minimal byte DFA, or a
    ``CountedDfa`` when it has a repetition bound above ``count_above`` (default 32; None
    expands every repetition): the repetition is then one loop with a counter beside the DFA
    state (``counted.py``), so neither the automaton nor the compile time grow with the bound.

    A tree that is one literal text or an alternation of them (a choice, an enum) is built
    directly as the minimal DFA of the set (``literal_dfa.py``). Otherwise: Thompson NFA,
    subset construction and minimization; the DFA state limit is ``max_states`` or, when
    larger, the UTF-8 length of the literal alternatives in the tree plus one
    (``literal_bytes``): a set of literal texts (an enum, a choice) may need one state per
    byte, never more, and is never refused for that. Raises LimitExceeded("max_nfa_states" /
    "max_states")."""
    texts = _literal_set(node)
    if texts is not None:  # a finite set of texts: its minimal DFA directly, in linear time
        return literal_set_dfa(texts)[0]
    nfa, start, accept = build_nfa(node, max_nfa_states, count_above)
    dfa = determinize(nfa, start, accept, max(max_states, literal_bytes(node) + 1))
    return CountedDfa(dfa, nfa.bounds) if nfa.bounds else dfa


def _literal_set(node) -> list[bytes] | None:
    """The texts of ``node`` when it is one literal text or an alternation of them."""
    items = node.items if isinstance(node, Alt) else (node,)
    texts = [literal_text(it) for it in items]
    return texts if texts and all(t is not None for t in texts) else None


def literal_bytes(node) -> int:
    """Total UTF-8 length of the branches of the alternations in ``node`` whose branches are
    all literal texts (``grammar_ast.literal_text``). Iterative, linear in the tree."""
    total, todo, seen = 0, [node], set()
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, Alt):
            texts = [literal_text(it) for it in n.items]
            if all(t is not None for t in texts):
                total += sum(map(len, texts))
                continue
            todo.extend(n.items)
        elif isinstance(n, Seq):
            todo.extend(n.items)
        elif isinstance(n, Repeat):
            todo.append(n.item)
    return total


def compile_regex(pattern: str, *, max_states: int = DEFAULT_MAX_DFA_STATES,
                  max_nfa_states: int = DEFAULT_MAX_NFA_STATES) -> Grammar:
    """Compile a regular expression (full-match semantics) into a ``Grammar``.

    The syntax is the subset of Python ``re`` listed in ``regex_parse.py`` and docs/masker.md;
    ``\\d \\w \\s`` are ASCII. Limits: ``max_nfa_states`` (default 250,000) and ``max_states``
    DFA states (default 20,000, raised to the byte length of the pattern's literal
    alternatives when that is larger: see ``ast_to_dfa``). Raises GrammarSyntaxError (bad
    syntax or empty language), UnsupportedFeature (backreferences, lookaround...) and
    LimitExceeded, all at compile time.
    """
    with nesting_guard("regex"), gc_paused():
        dfa = ast_to_dfa(parse_regex(pattern), max_states=max_states,
                         max_nfa_states=max_nfa_states)
    return check_nonempty(Grammar(dfa, "regex", pattern), pattern, "regex")


def compile_choice(texts, *, max_states: int | None = None) -> Grammar:
    """A grammar whose complete texts are exactly ``texts`` (an iterable of str).

    Texts may be prefixes of each other (``["1", "12", "123"]``): after ``1`` the matcher is
    accepting and can still continue. The automaton is the minimal DFA of the set, built
    directly from the texts' trie in time linear in their total length (``literal_dfa.py``),
    so it has at most (total UTF-8 bytes + 1) states: ``max_states`` (default None: no limit
    beyond that) is applied only when it is given and smaller.

    Raises GrammarSyntaxError when ``texts`` is empty, TypeError when an item is not a str,
    and LimitExceeded("max_states") when a given ``max_states`` is below the minimal DFA's
    size.
    """
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] must be str, got {type(text).__name__}")
    if not texts:
        raise GrammarSyntaxError("[]", 0, "compile_choice got no texts (expected at least one)",
                                 "pass a non-empty list of strings", code="choice.empty")
    with gc_paused():
        dfa, _ = literal_set_dfa([t.encode("utf-8") for t in texts])
    if max_states is not None and dfa.n_states > max_states:
        raise LimitExceeded(f"the choice needs {dfa.n_states} DFA states", "max_states",
                            max_states, "raise max_states, or leave it out (a choice never "
                            "needs more states than its texts have bytes, plus one)",
                            code="limit.choice_states", states=dfa.n_states)
    return Grammar(dfa, "choice", tuple(texts))
