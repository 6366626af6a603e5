"""The log-weight picture draws the data it is given: each dot maps back to its position and ln w
through the axes the SVG states; the curve is the kept masses of the grammar along the text."""
from __future__ import annotations

import math
import re

import pytest

from lesson import compile_choice
from lesson.course import NAMES, PROMPT, answer
from lesson.distorsion.curves import WeightCurve, weight_curve, weight_curves_svg, weight_curves_table
from lesson.sampling import Decoder


def attrs(tag: str) -> dict:
    return dict(re.findall(r'([\w-]+)="([^"]*)"', tag))


def test_dots_map_back_to_the_values():
    curves = [WeightCurve("A", [b"{", b'"', b"a", b'"', b"}"], [-1.0, -20.0, -0.5, -15.0, -3.0]),
              WeightCurve("Bb", [b"{", b'"', b"b", b"b", b'"', b"}"], [-1.0, -20.0, -0.1, -0.2, -16.0, -2.0])]
    svg = weight_curves_svg(curves)
    root = attrs(re.match(r"<svg[^>]*>", svg).group(0))
    assert root["role"] == "img" and "<title>" in svg and "viewBox" in root
    top, bottom = float(root["data-top"]), float(root["data-bottom"])
    y_top, y_bottom = float(root["data-y-top"]), float(root["data-y-bottom"])
    x_first, x_last, last = float(root["data-x-first"]), float(root["data-x-last"]), int(root["data-last"])
    dots = [attrs(t) for t in re.findall(r"<circle [^>]*data-position[^>]*>", svg)]
    assert len(dots) == 5 + 6
    for d in dots:
        c = next(c for c in curves if c.name == d["data-curve"])
        j = int(d["data-position"])
        value = top + (float(d["cy"]) - y_top) / (y_bottom - y_top) * (bottom - top)
        assert value == pytest.approx(c.cumulative[j - 1], abs=0.05)
        assert 1 + (float(d["cx"]) - x_first) / (x_last - x_first) * (last - 1) == pytest.approx(j, abs=0.01)
    rings = re.findall(r'data-closing="([^"]+)"', svg)
    assert sorted(rings) == ["A", "Bb"]
    assert curves[0].closing == 4 and curves[1].closing == 5
    bracket = attrs(re.search(r"<line [^>]*data-gap[^>]*>", svg).group(0))
    gap = float(bracket["data-gap"])
    assert gap == pytest.approx(curves[1].cumulative[3] - curves[0].cumulative[3])
    # the bracket stands at the first curve's closing position and joins the two curves' dots there
    at = {d["data-curve"]: d for d in dots if d["data-position"] == "4"}
    assert float(bracket["x1"]) == float(bracket["x2"]) == pytest.approx(float(at["A"]["cx"]), abs=0.01)
    assert sorted([float(bracket["y1"]), float(bracket["y2"])]) == pytest.approx(
        sorted([float(at["A"]["cy"]), float(at["Bb"]["cy"])]), abs=0.01)
    # its label is the same gap, rounded once
    assert f"{gap:.1f} nats".replace(".", ",") == "15,2 nats" and "15,2 nats</text>" in svg
    assert "−21,0" in weight_curves_table(curves) and "." not in re.sub(r"<[^>]+>", "", weight_curves_table(curves))


def test_a_curve_is_the_grammars_kept_masses_along_the_text(model, tok):
    grammar = compile_choice([answer(n) for n in NAMES])
    c = weight_curve(model, tok, PROMPT, grammar, answer("Benina"), "Benina")
    assert b"".join(c.labels) == answer("Benina").encode()
    decoder = Decoder(model, tok, PROMPT, grammar)  # replay the same tokens: same kept masses
    ids = [tok.vocab.index(b) for b in c.labels]
    replay = [math.log(decoder.step(t).kept_mass) for t in ids]
    assert replay == pytest.approx(c.log_kept, abs=1e-9)
    assert all(v <= 0 for v in c.log_kept)
    assert c.labels[c.closing - 1] == b'"' and b"".join(c.labels[c.closing:]) == b"}"
