"""«Trampas y decisiones» (``trampas.html``): what a guaranteed format leaves open.

- :mod:`lesson.trampas.studies`: each trap measured on the model, with its view (``age_study``,
  ``field_order``, ``budget_demo``, ``date_study``, ``enum_scaling``, ``depth_bounded``,
  ``Answers``);
- :mod:`lesson.trampas.figures`: the page's prose figures (``compute_figures``, called by the build).

The page's cells import from this package: ``from lesson.trampas import enum_scaling``.
"""

from .studies import (AGE_SCHEMA, BUDGET_PROMPT, BUDGET_SCHEMA, ORDER_HINTS, ORDER_NAMES, THREAD_PROMPT,
                      THREAD_SCHEMA, Answers, age_study, budget_demo, date_schema, date_study, depth_bounded,
                      enum_scaling, field_order, nesting_depth, order_schema)

__all__ = ["AGE_SCHEMA", "Answers", "BUDGET_PROMPT", "BUDGET_SCHEMA", "ORDER_HINTS", "ORDER_NAMES",
           "THREAD_PROMPT", "THREAD_SCHEMA", "age_study", "budget_demo", "date_schema", "date_study",
           "depth_bounded", "enum_scaling", "field_order", "nesting_depth", "order_schema"]
