"""Grammar masker: choices, regular expressions, JSON Schema and context-free grammars compiled
to token masks over a byte-level vocabulary. Pure Python + NumPy (runs in Pyodide).

Public API: ``compile_choice``, ``compile_regex``, ``compile_cfg``, ``compile_json_schema``,
each returning a ``Grammar`` whose ``.matcher(vocab)`` gives a ``Matcher`` (see its docstring for
the decode loop and the end rule). Errors: ``masker.errors``. Guide: docs/masker.md.
"""

from .cfg import compile_cfg
from .errors import (BudgetTooSmall, GrammarSyntaxError, LimitExceeded, MaskerError,
                     TokenNotAllowed,
                     UnsupportedFeature)
from .json_schema import compile_json_schema
from .matcher import Grammar, Matcher
from .regex_fsm import compile_choice, compile_regex

__all__ = ["compile_choice", "compile_regex", "compile_cfg", "compile_json_schema", "Grammar",
           "Matcher", "MaskerError", "GrammarSyntaxError", "UnsupportedFeature", "LimitExceeded",
           "TokenNotAllowed", "BudgetTooSmall"]
