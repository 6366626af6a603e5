"""The page script's number formats (browser/js/views.js) against the Python ones they copy
(lesson.numbers): the whole-vocabulary list the script draws must print each probability as the
view's static rows print it, in both editions."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

import build
from lesson.numbers import en_prob, es_prob


def _js_function(source: str, name: str) -> str:
    return re.search(rf"^export function {name}.*?^}}", source, re.S | re.M)[0].removeprefix("export ")


def test_the_script_prints_probabilities_as_the_views_do():
    node = shutil.which("node")
    if node is None:
        pytest.skip("no Node here")
    views = (build.ROOT / "browser" / "js" / "views.js").read_text(encoding="utf-8")
    superscript = re.search(r"^const SUPERSCRIPT = .*?;$", views, re.M)[0]
    rng = np.random.default_rng(0)
    values = sorted(set(np.concatenate([10 ** rng.uniform(-12, 0, 400), rng.uniform(0, 1, 200),
                                        [0.0, 0.0315, 0.00995, 0.009995, 0.9996, 0.99949, 1.0, 0.01, 0.001]])))
    shown = [float(f"{x:.6g}") for x in values]  # what data-p carries
    script = "\n".join(['function pageLanguage() { return "es"; }', superscript, _js_function(views, "esProb")]) + (
        f"\nconst v = {json.dumps(shown)};"
        "\nconsole.log(JSON.stringify([v.map(p => esProb(p, 'es')), v.map(p => esProb(p, 'en'))]));")
    es, en = json.loads(subprocess.run([node, "-e", script], capture_output=True, text=True, check=True).stdout)
    assert es == [es_prob(x) for x in values]
    assert en == [en_prob(x) for x in values]
