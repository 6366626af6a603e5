"""The «Laboratorio» (``laboratorio.html``): any constraint on the model, with no code.

:mod:`lesson.laboratorio.lab` (with :mod:`~lesson.laboratorio.constraint`, :mod:`~lesson.laboratorio.settings`,
:mod:`~lesson.laboratorio.presets` and :mod:`~lesson.laboratorio.protocol`) holds ``compile_constraint`` (errors with place and fix), ``Lab``
(generate, step, pick, compare), ``PRESETS`` and ``act``, the one call the page's form makes
(``from lesson.laboratorio import act``).
"""

from .lab import PRESETS, ConstraintError, Lab, compile_constraint, error_html, preset_titles, refused_at
from .protocol import act

__all__ = ["ConstraintError", "Lab", "PRESETS", "act", "compile_constraint", "error_html", "preset_titles", "refused_at"]
