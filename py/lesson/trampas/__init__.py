"""«Trampas y decisiones» (``trampas.html``): what a guaranteed format leaves open.

- :mod:`lesson.trampas.studies`: each trap measured on the model, with its view (``age_study``,
  ``field_order``, ``budget_demo``, ``date_study``, ``enum_scaling``, ``depth_bounded``,
  ``Answers``);
- :mod:`lesson.trampas.budget`: the budget's two effects, measured exactly (``BudgetLanguage``,
  ``budget_split``), and the budget sweep (``budget_sweep``); :mod:`lesson.trampas.budget_plot`
  draws the sweep (``sweep_svg``);
- :mod:`lesson.trampas.figures`: the page's prose figures (``compute_figures``, called by the build).

The page's cells import from this package: ``from lesson.trampas import enum_scaling``.
"""

from .budget import BudgetLanguage, budget_split, budget_sweep
from .studies import (AGE_SCHEMA, BUDGET_PROMPT, BUDGET_SCHEMA, ORDER_HINTS, ORDER_NAMES, THREAD_PROMPT,
                      THREAD_SCHEMA, Answers, CutThreads, age_study, dash_to_zero, budget_demo, date_schema, date_study, depth_bounded,
                      enum_scaling, field_order, nesting_depth, order_factors, order_schema, total_variation)

__all__ = ["AGE_SCHEMA", "Answers", "CutThreads", "dash_to_zero", "BudgetLanguage", "budget_split", "budget_sweep", "total_variation", "BUDGET_PROMPT", "BUDGET_SCHEMA", "ORDER_HINTS", "ORDER_NAMES",
           "THREAD_PROMPT", "THREAD_SCHEMA", "age_study", "budget_demo", "date_schema", "date_study",
           "depth_bounded", "enum_scaling", "field_order", "nesting_depth", "order_factors", "order_schema"]
