"""«Del esquema al autómata» (``automata.html``): how a constraint becomes a mask.

- :mod:`lesson.automata.route`: regex → Thompson NFA → DFA → minimal DFA (``regex_route``), the DFA
  drawn as SVG from the masker's tables (``DfaDiagram``), tokens that cross several edges
  (``crossings``, ``CrossingTable``), objects of k keys in a fixed or any order (``keys_regex``);
- :mod:`lesson.automata.trie`: the token-trie walk traced (``trie_walk``) and the state → mask index
  (``MaskIndex``, ``mask_timings``);
- :mod:`lesson.automata.stack`: why JSON needs a stack: Earley items against a depth-bounded DFA
  (``stack_growth``, ``StackPlot``);
- :mod:`lesson.automata.forced`: fast-forward of forced tokens compared with step-by-step sampling
  (``compare_fast_forward``);
- :mod:`lesson.automata.dfa_check`: the phone exercise's checker (``check_phone_dfa``: the reader's
  DFA, a dict, against ``compile_regex``'s, mask by mask);
- :mod:`lesson.automata.phones`: the phone samples (``PhoneCheck``; the unmasked samples come from
  the library's ``sample_until_invalid``);
- :mod:`lesson.automata.figures`: the page's prose figures (``compute_figures``, called by the build).

The page's cells import from this package: ``from lesson.automata import regex_route``.
"""

from .dfa_check import PHONE, DfaCheck, check_dfa, check_phone_dfa
from .forced import FastForwardComparison, compare_fast_forward, path_probability
from .phones import PhoneCheck
from .route import CrossingTable, DfaDiagram, RegexRoute, crossings, keys_regex, regex_route
from .stack import NESTED_GBNF, StackPlot, bounded_regex, nested_prefix, stack_growth
from ..views import is_partial
from .trie import MaskIndex, TrieWalk, mask_timings, trie_walk

__all__ = ["CrossingTable", "DfaCheck", "DfaDiagram", "FastForwardComparison", "MaskIndex",
           "NESTED_GBNF", "PHONE", "PhoneCheck", "RegexRoute", "StackPlot", "TrieWalk", "bounded_regex",
           "check_dfa", "check_phone_dfa", "compare_fast_forward", "crossings", "is_partial", "keys_regex",
           "mask_timings", "nested_prefix", "path_probability", "regex_route", "stack_growth",
           "trie_walk"]
