"""«Trampas» §5 quotes our own run of bench/bench_vocab.py (py/lesson/trampas/measured_vocab.json):
the figures it reads are that file's, and the ratios it states are the quotients of its numbers."""
from __future__ import annotations

import json

import pytest

from lesson.trampas import figures


def test_the_measured_figures_are_the_benchs_file():
    data = json.loads(figures.MEASURED_VOCAB.read_text(encoding="utf-8"))
    fig = figures.measured_figures()
    assert fig["vocab"] == data["vocab"] == "o200k_base"
    assert fig["masks"] == data["masks"] > 1000 and fig["schemas"] == data["schemas"]
    assert fig["command"].startswith("python bench/bench_vocab.py")
    assert fig["ours"]["p50"] <= fig["ours"]["p99"] <= fig["ours"]["max"]
    assert fig["theirs"]["p50"] <= fig["theirs"]["p99"] <= fig["theirs"]["max"]
    assert fig["ratio_p50"] == pytest.approx(fig["ours"]["p50"] / fig["theirs"]["p50"])
    assert fig["ratio_p99"] == pytest.approx(fig["ours"]["p99"] / fig["theirs"]["p99"])
    assert fig["ratio_compile"] == pytest.approx(fig["ours"]["compile_ms"]
                                                 / fig["theirs"]["compile_ms"])
    assert fig["computed"]["p50"] >= fig["ours"]["p50"]  # the cache hits only lower it
    assert fig["cache_hits"] < fig["masks"] and fig["schemas_with_masks"] <= fig["schemas"]
    assert fig["schemas"] + fig["ours_refused"] + fig["llg_refused"] <= fig["files_taken"]
    assert fig["disagreeing_known"] + fig["disagreeing_other"] == fig["disagreeing"]
    assert fig["ratio_first"] == pytest.approx(fig["first_ms"]["ours"] / fig["first_ms"]["theirs"])
    # «La cola pesa sobre pocos esquemas»: most of the 100 slowest masks come from one
    assert 50 < fig["slowest_share"] <= 100
    assert fig["disagreeing"] > 0  # «no siempre son las mismas máscaras»
    assert fig["disagreeing_percent"] == round(100 * fig["disagreeing"] / fig["masks"])
    assert fig["after_ours_refused"] == fig["files_taken"] - fig["ours_refused"]
    assert fig["ratio_computed_p50"] == pytest.approx(fig["computed"]["p50"] / fig["theirs"]["p50"])
    assert fig["ratio_computed_p99"] == pytest.approx(fig["computed"]["p99"] / fig["theirs"]["p99"])
    day, month, year = fig["measured"].split("-")
    assert f"{year}-{month}-{day}" == data["measured"]
