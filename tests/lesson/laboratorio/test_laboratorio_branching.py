"""Branching in the library: ``Decoder.fork_at`` against a fresh decoder of the same seed given
the same prefix as picks, and against full forward passes of the model."""

from __future__ import annotations

import numpy as np
import pytest

from lesson import compile_cfg, compile_choice, compile_json_schema, compile_regex
from lesson.sampling import Decoder
from minigpt.gpt import softmax

PROMPT = "Benina dijo: "
GRAMMARS = {
    "regex": lambda: compile_regex(r"[a-zñ]{2,6}( [a-zñ]{2,6}){1,3}\."),
    "choice": lambda: compile_choice(["aprobado", "rechazado", "revisión"]),
    "schema": lambda: compile_json_schema({"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 1, "maximum": 99}}, "required": ["n"],
        "additionalProperties": False}),
    "gbnf": lambda: compile_cfg('root ::= "(" root ")" | "x"'),
    "none": lambda: None,
}


def run(decoder: Decoder) -> Decoder:
    while not decoder.done:
        decoder.step()
    return decoder


def fresh_with_picks(model, tok, grammar, picks: list[int], **settings) -> Decoder:
    """The reference: a new decoder of the same seed, the prefix given token by token."""
    decoder = Decoder(model, tok, PROMPT, grammar, **settings)
    for t in picks:
        decoder.step(token_id=t)
    return decoder


def same_path(a, b) -> None:
    assert a.token_ids == b.token_ids and a.status == b.status
    for pa, pb in zip(a.positions, b.positions, strict=True):
        assert pa.chosen == pb.chosen and pa.forced == pb.forced
        assert pa.p_chosen == pytest.approx(pb.p_chosen, rel=1e-12)
        assert pa.q_chosen == pytest.approx(pb.q_chosen, rel=1e-12)
        assert (pa.allowed is None) == (pb.allowed is None)
        if pa.allowed is not None:
            assert [t for t, _, _ in pa.allowed] == [t for t, _, _ in pb.allowed]


def other_allowed(position) -> int:
    """An allowed token of this position with q > 0 that is not the one chosen there."""
    if position.allowed is None:
        return int(np.argsort(-position.probs)[1]) if int(np.argmax(position.probs)) == position.chosen \
            else int(np.argmax(position.probs))
    return next(t for t, _, q in position.allowed if q > 0 and t != position.chosen)


@pytest.mark.parametrize("name", list(GRAMMARS))
@pytest.mark.parametrize("settings", [{"seed": 3}, {"seed": 5, "top_k": 20, "top_p": 0.9, "temperature": 0.8}])
def test_a_fork_is_a_fresh_generation_from_the_same_prefix_and_seed(model, tok, name, settings):
    grammar = GRAMMARS[name]()
    settings = {"max_tokens": 24, **settings}
    parent = run(Decoder(model, tok, PROMPT, grammar, **settings))
    before = list(parent.generation.token_ids)
    j = next((j for j, pos in enumerate(parent.generation.positions, start=1)
              if j >= 2 and (pos.allowed is None or sum(q > 0 for _, _, q in pos.allowed) > 1)), None)
    if j is None:
        pytest.skip("no real choice after position 1 on this path")
    token = other_allowed(parent.generation.positions[j - 1])
    fork = run(parent.fork_at(j, token))
    reference = run(fresh_with_picks(model, tok, grammar, before[:j - 1] + [token], **settings))
    same_path(fork.generation, reference.generation)
    assert fork.generation.token_ids[:j - 1] == before[:j - 1] and fork.generation.token_ids[j - 1] == token
    assert parent.generation.token_ids == before  # the parent is not changed
    if grammar is not None and fork.generation.complete:
        assert grammar.accepts(fork.generation.bytes)


def test_a_fork_at_position_one_is_the_whole_fresh_generation(model, tok):
    grammar = GRAMMARS["regex"]()
    parent = run(Decoder(model, tok, PROMPT, grammar, seed=2, max_tokens=30))
    again = run(parent.fork_at(1))
    same_path(again.generation, parent.generation)


def test_the_forks_next_distribution_is_a_full_forward_pass(model, tok):
    grammar = GRAMMARS["regex"]()
    parent = run(Decoder(model, tok, PROMPT, grammar, seed=1, temperature=0.7, max_tokens=30))
    ids = parent.generation.token_ids
    for j in (2, len(ids)):
        fork = parent.fork_at(j)
        logits = model.astype(np.float64).forward(np.array([tok.encode(PROMPT) + ids[:j - 1]]))[0, -1]
        assert np.allclose(fork.next_distribution(), softmax(logits / 0.7), rtol=1e-9, atol=1e-15)


def test_fork_positions_outside_the_generation_are_refused(model, tok):
    parent = run(Decoder(model, tok, PROMPT, GRAMMARS["choice"](), seed=0))
    n = len(parent.generation.token_ids)
    for bad in (0, n + 1):
        with pytest.raises(ValueError):
            parent.fork_at(bad)
    with pytest.raises(ValueError):  # a token the mask refuses
        parent.fork_at(1, tok.vocab.index(b"x"))
    open_one = Decoder(model, tok, PROMPT, GRAMMARS["regex"](), seed=0)
    open_one.step()
    assert len(open_one.fork_at(2).generation.token_ids) == 1  # the next position of one in progress


def test_a_budget_aware_fork_counts_the_kept_tokens(model, tok):
    grammar = GRAMMARS["regex"]()
    settings = {"seed": 4, "max_tokens": 12, "budget_aware": True}
    parent = run(Decoder(model, tok, PROMPT, grammar, **settings))
    ids = parent.generation.token_ids
    fork = run(parent.fork_at(3))
    reference = run(fresh_with_picks(model, tok, grammar, ids[:2], **settings))
    same_path(fork.generation, reference.generation)
    assert fork.generation.complete and len(fork.generation.token_ids) <= 12
