"""«Niveles de garantía» (``niveles.html``): each level of guarantee, measured on the model.

- :mod:`lesson.niveles.levels`: the levels' prompts and grammars, the checks (``parses``,
  ``matches_schema``, ``matches_parens``), the measurements (``measure_level``, ``measure_prompt``,
  ``with_retries``, ``retry_arithmetic``, ``fewest_tokens``, ``depth_counts``, ``stack_cost``) and
  their tables (``LevelsTable``, ``RetryTable``);
- :mod:`lesson.niveles.pictures`: the SVG pictures (the retry curves, ``DepthHistogram``);
- :mod:`lesson.niveles.handmask`: a mask from a state machine written by hand, compared with the
  masker's (``compare_masks``, ``ByteTrace``, ``envelope_bound``);
- :mod:`lesson.niveles.figures`: the page's prose figures (``compute_figures``, called by the build).

The page's cells import from this package: ``from lesson.niveles import measure_level``.
"""

from .handmask import (ByteTrace, FsmAgreement, compare_masks, enum_object_machine, envelope_bound,
                       prefix_shared_bound)
from .levels import (FEW_SHOT_PROMPT, JSON_MODE_GBNF, NAMES, PARENS_GBNF, PROMPT, RETRY_QUESTIONS, SCHEMA,
                     LevelResult, LevelsTable, RetryTable, answer, depth_counts, distinct_states, state_sources, bounded_parens_regex, fewest_tokens, first_nested,
                     inside_braces, matches_parens, matches_schema, measure_level, measure_prompt,
                     p_first_byte, paren_depth, parses, retry_arithmetic, stack_cost, with_retries, initial_choice, position_split,
                     StackCost)
from .pictures import DepthHistogram, depth_svg, retry_svg

__all__ = ["ByteTrace", "DepthHistogram", "depth_counts", "depth_svg", "fewest_tokens", "first_nested",
           "answer", "distinct_states", "state_sources", "bounded_parens_regex", "inside_braces", "paren_depth", "retry_svg", "stack_cost", "StackCost", "FEW_SHOT_PROMPT", "FsmAgreement", "JSON_MODE_GBNF", "LevelResult", "LevelsTable",
           "NAMES", "PARENS_GBNF", "PROMPT", "RETRY_QUESTIONS", "RetryTable", "SCHEMA", "compare_masks",
           "enum_object_machine", "envelope_bound", "prefix_shared_bound", "matches_parens", "matches_schema", "measure_level",
           "measure_prompt", "p_first_byte", "parses", "retry_arithmetic", "with_retries", "initial_choice",
           "position_split"]
