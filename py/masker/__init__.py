"""Grammar masker: choices, regular expressions, JSON Schema and context-free grammars compiled
to token masks over a byte-level vocabulary. Pure Python + NumPy (runs in Pyodide).

Public API: ``compile_choice``, ``compile_regex``, ``compile_cfg``, ``compile_json_schema``,
each returning a ``Grammar`` whose ``.matcher(vocab)`` gives a ``Matcher`` (see its docstring for
the decode loop and the end rule). Errors: ``masker.errors``.
"""

from .errors import (GrammarSyntaxError, LimitExceeded, MaskerError, TokenNotAllowed,
                     UnsupportedFeature)
from .matcher import Grammar, Matcher
from .regex_fsm import compile_choice, compile_regex

__all__ = ["compile_choice", "compile_regex", "Grammar", "Matcher", "MaskerError",
           "GrammarSyntaxError", "UnsupportedFeature", "LimitExceeded", "TokenNotAllowed"]

try:  # the context-free grammar compiler
    from .cfg import compile_cfg  # noqa: F401
    __all__.append("compile_cfg")
except ImportError:  # pragma: no cover - present once cfg.py lands
    pass

try:  # JSON Schema lives in json_schema*.py
    from .json_schema import compile_json_schema  # noqa: F401
    __all__.append("compile_json_schema")
except ImportError:  # pragma: no cover - present once json_schema.py lands
    pass
