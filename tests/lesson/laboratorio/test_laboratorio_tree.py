"""The «Laboratorio»'s tree in CPython: a branch chosen at any position keeps its parent's tokens
before it and is a fresh generation from there (each later token checked with the masker's
brute-force mask and ``accepts``); «Paso hasta la próxima elección» passes only forced positions;
the offered tokens are exactly those with q̃ > 0 (recomputed here from p, the brute-force mask
and top-k / top-p written out), and the button, the panel and the summary give the same q̃; the
tree written for the address rebuilds the same branches."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from lesson.laboratorio.lab import PRESETS, Lab
from lesson.laboratorio.tree import decode_tree
from lesson.sampling import Decoder


class Hooks(HTMLParser):
    def __init__(self):
        super().__init__()
        self.items: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "data-testid" in attrs:
            self.items.append(attrs)


def hooks(html: str, testid: str) -> list[dict]:
    parser = Hooks()
    parser.feed(html)
    return [h for h in parser.items if h["data-testid"] == testid]


def preset_lab(model, tok, name: str, **settings) -> Lab:
    preset = PRESETS[name]
    return Lab(model, tok, kind=preset["kind"], constraint=preset["constraint"], prompt=preset["prompt"],
               **{"seed": 0, "max_tokens": 120, **preset.get("settings", {}), **settings})


def every_token_allowed(lab: Lab, ids: list[int]) -> None:
    """Each token is in the brute-force mask after the tokens before it."""
    matcher = lab.grammar.matcher(lab.tok.vocab)
    for t in ids:
        assert matcher.brute_force_mask()[t], (t, matcher.prefix_bytes)
        matcher.consume(t)


def reference_offered(p: np.ndarray, mask: np.ndarray, top_k, top_p) -> dict[int, float]:
    """q̃ written out: mask, renormalise, keep the top_k most probable, then the smallest prefix
    whose mass reaches top_p, renormalise (ties by id)."""
    ids = sorted(np.flatnonzero(mask).tolist(), key=lambda t: (-p[t], t))
    if top_k is not None:
        ids = ids[:top_k]
    if top_p is not None:
        total, kept = sum(p[t] for t in ids), []
        for t in ids:
            kept.append(t)
            if sum(p[u] for u in kept) >= top_p * total * (1 - 1e-12):
                break
        ids = kept
    z = sum(p[t] for t in ids)
    return {t: p[t] / z for t in ids}


def test_a_branch_at_position_3_keeps_two_tokens_and_goes_on_allowed(model, tok):
    lab = preset_lab(model, tok, "conjugacion").generate()
    parent = list(lab.decoder.generation.token_ids)
    position = 3
    while not lab.decoder.generation.positions[position - 1].allowed[1:]:
        position += 1  # the first position from 3 on with another allowed token
    other = next(t for t, _, q in lab.decoder.generation.positions[position - 1].allowed
                 if q > 0 and t != parent[position - 1])
    lab.choose(position, other)
    assert len(lab.branches) == 2 and lab.current == 1
    ids = lab.decoder.generation.token_ids
    assert ids[:position - 1] == parent[:position - 1] and ids[position - 1] == other
    assert lab.branches[0].decoder.generation.token_ids == parent  # nothing discarded
    every_token_allowed(lab, ids)
    assert lab.decoder.done and (not lab.decoder.generation.complete or lab.grammar.accepts(lab.decoder.generation.bytes))
    fresh = Decoder(model, tok, lab.prompt, lab.grammar, **lab.settings)
    for t in parent[:position - 1] + [other]:
        fresh.step(token_id=t)
    while not fresh.done:
        fresh.step()
    assert fresh.generation.token_ids == ids
    (branch,) = [b for b in hooks(lab.view(), "lab-branch") if b["data-index"] == "1"]
    assert branch["data-parent"] == "0" and branch["data-from"] == str(position)
    assert branch["data-text"] == lab.decoder.generation.text and branch["data-state"] == "done"
    (table,) = hooks(lab.view(), "lab-branch-compare")  # beside its parent, position by position
    rows = re.findall(r'<tr data-position="(\d+)">', lab.view())
    assert rows[0] == str(position) and int(rows[-1]) == max(len(ids), len(parent))
    first = hooks(lab.view(), "lab-branch")[0]
    assert first["data-parent"] == "" and first["data-from"] == ""


def test_the_next_choice_passes_only_forced_positions(model, tok):
    lab = preset_lab(model, tok, "conjugacion")
    for _ in range(4):
        before = len(lab.decoder.generation.token_ids)
        lab.next_choice()
        gen = lab.decoder.generation
        assert len(gen.token_ids) > before
        for pos in gen.positions[before + 1:]:  # the first one taken may be a choice
            assert pos.is_forced or sum(q > 0 for _, _, q in pos.allowed) == 1
        if lab.decoder.done:
            break
        (choices,) = hooks(lab.view(), "lab-choices")
        assert choices["data-position"] == str(len(gen.token_ids) + 1)
        assert len(hooks(lab.view(), "lab-allowed-token")) >= 2 and not lab._next_is_forced()
    assert lab.decoder.generation.positions[0].forced  # JSON opens with a forced «{»


@pytest.mark.parametrize("settings", [{"top_k": 20, "top_p": 0.9}, {"top_k": 3}, {"top_p": 0.5}, {}])
def test_offered_tokens_are_those_with_q_above_zero_and_every_number_agrees(model, tok, settings):
    lab = preset_lab(model, tok, "etiquetas", **settings)
    for _ in range(3):
        if lab.decoder.done:
            break
        p = lab.decoder.next_distribution()
        reference = reference_offered(p, lab.decoder.matcher.brute_force_mask(), settings.get("top_k"),
                                      settings.get("top_p"))
        buttons = hooks(lab.view(), "lab-allowed-token")
        assert {int(b["data-token-id"]) for b in buttons} == set(reference)
        for b in buttons:
            assert float(b["data-q"]) == pytest.approx(reference[int(b["data-token-id"])], rel=1e-12)
        last = buttons[-1]  # the least likely one offered
        lab.pick(int(last["data-token-id"]))
        pos = lab.decoder.generation.positions[-1]
        assert pos.q_chosen == float(last["data-q"]) > 0
        (panel_q,) = re.findall(r'data-panel="%d".*?q̃(?:</abbr>)? = ([0-9,]+)' % len(lab.decoder.generation.positions),
                                lab.view(), re.S)[:1]
        assert panel_q in last["aria-label"]  # the same rounded q̃ in the panel and on the button
    summary = re.search(r"ln q̃\(y \| x\) = (−?[0-9,]+)", lab.view()).group(1)
    log_q = sum(math.log(pos.q_chosen) for pos in lab.decoder.generation.positions)
    assert float(summary.replace("−", "-").replace(",", ".")) == pytest.approx(log_q, abs=0.006)


def test_any_earlier_position_lists_all_its_allowed_tokens(model, tok):
    lab = Lab(model, tok, kind="regex", constraint=".*", prompt="La señora ", max_tokens=6).generate()
    ids = lab.decoder.generation.token_ids
    for j in (1, 4, 6):
        lab.open(j)
        buttons = hooks(lab.view(), "lab-allowed-token")
        matcher = lab.grammar.matcher(tok.vocab)
        for t in ids[:j - 1]:
            matcher.consume(t)
        brute = set(np.flatnonzero(matcher.brute_force_mask()).tolist())
        assert len(brute) > 400  # «.*»: every token but those with a newline or broken UTF-8
        assert {int(b["data-token-id"]) for b in buttons} == brute and {b["data-position"] for b in buttons} == {str(j)}
        chosen = [b for b in buttons if b.get("aria-current") == "true"]
        assert [int(b["data-token-id"]) for b in chosen] == [lab.decoder.generation.token_ids[j - 1]]


def test_the_tree_text_rebuilds_the_same_branches(model, tok):
    lab = preset_lab(model, tok, "fecha", max_tokens=40).generate()
    for k in range(7):
        j = 2 + k % 4
        allowed = [t for t, _, q in lab.decoder.generation.positions[j - 1].allowed
                   if q > 0 and t != lab.decoder.generation.token_ids[j - 1]]
        if allowed:
            lab.choose(j, allowed[k % len(allowed)])
    lab.select(0).step()  # a finished branch: nothing happens, and the view says so
    assert "ya terminó" in lab.view()
    stepping = preset_lab(model, tok, "fecha", max_tokens=40).step().step()
    text = lab.tree()
    assert len(text) < 300 and len(decode_tree(text)) == len(lab.branches) >= 6
    again = preset_lab(model, tok, "fecha", max_tokens=40).restore(text, current=2, selected=3)
    assert [b.decoder.generation.token_ids for b in again.branches] == [b.decoder.generation.token_ids for b in lab.branches]
    assert [(b.parent, b.start) for b in again.branches] == [(b.parent, b.start) for b in lab.branches]
    assert again.current == 2 and again.selected == 3
    half = preset_lab(model, tok, "fecha", max_tokens=40).restore(stepping.tree())
    assert half.decoder.generation.token_ids == stepping.decoder.generation.token_ids and not half.decoder.done


def test_refusals_and_bad_links_are_said_in_spanish(model, tok):
    lab = preset_lab(model, tok, "etiquetas", top_k=1).generate()
    with pytest.raises(ValueError, match="q̃ = 0"):
        lab.choose(1, next(t for t, _, q in lab.decoder.generation.positions[0].allowed if q == 0))
    with pytest.raises(ValueError, match="no existe"):
        lab.open(99)
    for bad in ("x", "r_5.1.2", "r_0.99.3"):
        with pytest.raises(ValueError, match="enlace"):
            preset_lab(model, tok, "etiquetas").restore(bad)


def test_eight_branches_of_forty_tokens_fit_in_a_few_hundred_characters(model, tok):
    """The issue's size: 8 branches of 40 tokens, each leaving the first at another position, and
    the tree text, as the address holds it, stays under 300 characters and rebuilds the same tree."""
    lab = Lab(model, tok, kind="regex", constraint="[a-zñ ]{40,400}", prompt="Benina dijo: ", max_tokens=40)
    lab.generate()
    for position in (3, 8, 13, 18, 23, 28, 33):
        lab.select(0)
        offered = [t for t, _, _ in lab.branches[0].decoder.generation.positions[position - 1].allowed
                   if t != lab.decoder.generation.token_ids[position - 1]]
        lab.choose(position, offered[0])
    assert len(lab.branches) == 8
    assert all(len(b.decoder.generation.token_ids) == 40 for b in lab.branches)
    text = lab.tree()
    assert len(text) < 300, text
    again = Lab(model, tok, kind="regex", constraint="[a-zñ ]{40,400}", prompt="Benina dijo: ", max_tokens=40)
    again.restore(text)
    assert [b.decoder.generation.token_ids for b in again.branches] == \
           [b.decoder.generation.token_ids for b in lab.branches]
