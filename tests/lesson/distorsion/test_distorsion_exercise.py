"""The checker of the systematic-resampling exercise against the library's resampling: it accepts
right answers (a function or the list), and for wrong ones names the first index that differs."""
from __future__ import annotations

import numpy as np
import pytest

from lesson.distorsion import comprobar_remuestreo
from lesson.distorsion.exercise import EXTRA_CASES, U, WEIGHTS, check
from lesson.smc import systematic_resample


def by_hand(pesos, u):
    """An independent implementation: the first cumulative sum above each point."""
    m = len(pesos)
    acc = np.cumsum(pesos) / np.sum(pesos)
    out = []
    for k in range(m):
        i = 0
        while i < m - 1 and acc[i] <= (u + k) / m:
            i += 1
        out.append(i)
    return out


def test_the_independent_answer_is_the_librarys_on_every_case():
    for w, u in ((WEIGHTS, U), *EXTRA_CASES):
        assert by_hand(list(w), u) == systematic_resample(np.array(w) / np.sum(w), u).tolist()


def test_a_right_function_and_a_right_list_pass():
    v = comprobar_remuestreo(by_hand)
    assert v.ok and "Correcto" in str(v) and f"{1 + len(EXTRA_CASES)} casos" in str(v)
    assert check(by_hand(list(WEIGHTS), U)).ok
    assert 'data-ok="true"' in v._repr_html_()


@pytest.mark.parametrize("wrong, first", [
    (lambda p, u: [int(np.searchsorted(np.cumsum(p), u, side="right"))] * len(p), 0),  # u for every point
    (lambda p, u: [min(int(np.searchsorted(np.cumsum(p), u + k / len(p))), len(p) - 1)
                   for k in range(len(p))], 0),  # u + k/M instead of (u + k)/M
    (lambda p, u: list(range(len(p))), 2),  # keeps every particle once
])
def test_a_wrong_function_is_told_the_first_index_that_differs(wrong, first):
    v = check(wrong)
    assert not v.ok and v.index == first and v.case == (WEIGHTS, U)
    text = str(v)
    assert f"k = {first}" in text and "sumas acumuladas" in text and "(u + k) / M" in text
    assert "0,100; 0,500; 0,550; 0,850; 1,000" in text  # the cumulative sums, decimal commas
    assert "0,060; 0,260; 0,460; 0,660; 0,860" in text  # the points
    assert f'data-index="{first}"' in v._repr_html_()


def test_a_function_right_on_the_page_case_only_is_caught_on_another():
    """No normalisation: right for the page's weights (they sum to 1), wrong for (2, 1, 1)."""
    def unnormalised(p, u):
        acc, m = np.cumsum(p), len(p)
        return [min(int(np.argmax(acc > (u + k) / m)), m - 1) for k in range(m)]
    assert unnormalised(list(WEIGHTS), U) == by_hand(list(WEIGHTS), U)
    v = check(unnormalised)
    assert not v.ok and v.case is not None and v.case != (WEIGHTS, U)


def test_wrong_lengths_types_and_errors_are_reported_not_raised():
    empty = check(lambda p, u: [])
    assert not empty.ok and "0 índices" in str(empty) and empty.index is None
    long = str(check([0, 1, 1, 3, 4, 4]))  # one too many
    assert "devuelve 6 índices" in long and "elige 5" in long
    broken = check(lambda p, u: 1 / 0)
    assert not broken.ok and "ZeroDivisionError" in str(broken)
    nonsense = check(None)
    assert not nonsense.ok and "lista de índices" in str(nonsense)
    assert not check([0, 1.5, 1, 3, 4]).ok


def test_a_wrong_list_names_its_first_difference():
    v = check([0, 1, 2, 3, 4])
    assert not v.ok and v.index == 2 and "partícula 2" in str(v) and "partícula 1" in str(v)
