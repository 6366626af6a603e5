"""``compile_regex`` and ``compile_choice``: patterns and finite sets of texts -> byte DFA.

Pipeline: text -> syntax tree (``regex_parse.py``) -> byte-level NFA (``nfa.py``) -> minimal DFA
(``dfa.py``) -> ``Grammar``. The same route serves non-recursive context-free grammars
(``cfg.py``), so every regular language shares one automaton class and one mask routine.
"""

from __future__ import annotations

from .dfa import DEFAULT_MAX_DFA_STATES, Dfa, determinize
from .errors import GrammarSyntaxError, nesting_guard
from .grammar_ast import alt, literal
from .matcher import Grammar, check_nonempty
from .nfa import DEFAULT_MAX_NFA_STATES, build_nfa
from .regex_parse import parse_regex


def ast_to_dfa(node, *, max_states: int = DEFAULT_MAX_DFA_STATES,
               max_nfa_states: int = DEFAULT_MAX_NFA_STATES) -> Dfa:
    """Compile a ``grammar_ast`` tree without rule references into a minimal byte DFA."""
    nfa, start, accept = build_nfa(node, max_nfa_states)
    return determinize(nfa, start, accept, max_states)


def compile_regex(pattern: str, *, max_states: int = DEFAULT_MAX_DFA_STATES,
                  max_nfa_states: int = DEFAULT_MAX_NFA_STATES) -> Grammar:
    """Compile a regular expression (full-match semantics) into a ``Grammar``.

    The syntax is the subset of Python ``re`` listed in ``regex_parse.py`` and docs/masker.md;
    ``\\d \\w \\s`` are ASCII. Limits: ``max_nfa_states`` (default 250,000) and ``max_states``
    DFA states (default 20,000). Raises GrammarSyntaxError (bad syntax or empty language),
    UnsupportedFeature (backreferences, lookaround...) and LimitExceeded, all at compile time.
    """
    with nesting_guard("regular expression"):
        dfa = ast_to_dfa(parse_regex(pattern), max_states=max_states,
                         max_nfa_states=max_nfa_states)
    return check_nonempty(Grammar(dfa, "regex", pattern), pattern, "regular expression")


def compile_choice(texts, *, max_states: int = DEFAULT_MAX_DFA_STATES) -> Grammar:
    """A grammar whose complete texts are exactly ``texts`` (an iterable of str).

    Texts may be prefixes of each other (``["1", "12", "123"]``): after ``1`` the matcher is
    accepting and can still continue. Raises GrammarSyntaxError when ``texts`` is empty and
    TypeError when an item is not a str.
    """
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] must be str, got {type(text).__name__}")
    if not texts:
        raise GrammarSyntaxError("[]", 0, "compile_choice got no texts (expected at least one)",
                                 "pass a non-empty list of strings")
    dfa = ast_to_dfa(alt(literal(t) for t in dict.fromkeys(texts)), max_states=max_states,
                     max_nfa_states=max(DEFAULT_MAX_NFA_STATES, 8 * sum(map(len, texts))))
    return Grammar(dfa, "choice", tuple(texts))
