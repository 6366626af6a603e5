"""The page script's number formats (browser/js/numbers.js, which views.js uses) against the Python ones they copy
(lesson.numbers): the whole-vocabulary list the script draws must print each probability as the
view's static rows print it, in both editions."""
from __future__ import annotations

import numpy as np

from lesson.numbers import en_prob, es_prob
from tests.site.test_numbers_js import in_js, pytestmark  # noqa: F401  (skipped without Node)


def test_the_script_prints_probabilities_as_the_views_do():
    rng = np.random.default_rng(0)
    values = sorted(set(np.concatenate([10 ** rng.uniform(-12, 0, 400), rng.uniform(0, 1, 200),
                                        [0.0, 0.0315, 0.00995, 0.009995, 0.9996, 0.99949, 1.0, 0.01, 0.001]])))
    shown = [float(f"{x:.6g}") for x in values]  # what data-p carries
    written = in_js([("prob", p, lang) for lang in ("es", "en") for p in shown])
    assert written[:len(shown)] == [es_prob(x) for x in values]
    assert written[len(shown):] == [en_prob(x) for x in values]
