"""Sampling with and without the mask, for every grammar kind, checked against full forward passes
and brute-force masks: the records a reader sees are the model's real numbers, and every masked
answer is a text of the grammar (and valid JSON for the schema, by an independent validator)."""

from __future__ import annotations

import json
import math

import jsonschema
import numpy as np
import pytest

from lesson import compile_cfg, compile_choice, compile_json_schema, compile_regex, generate
from lesson.course import NAMES, PROMPT, answer, name_of
from lesson.sampling import truncate
from masker.trie import brute_force_mask
from tests.lesson.finite import FiniteGrammar
from tests.lesson.reference import logsumexp, next_logp

SCHEMA = {"type": "object", "properties": {"nombre": {"type": "string", "maxLength": 8},
                                          "edad": {"type": "integer", "minimum": 0, "maximum": 120}},
          "required": ["nombre", "edad"], "additionalProperties": False}
GBNF = 'root ::= "[" item ("," item)? "]"\nitem ::= "sí" | "no" | [0-9]'
KINDS = {
    "choice": lambda: compile_choice([answer(n) for n in NAMES]),
    "regex": lambda: compile_regex(r"(Benina|Obdulia) tiene [1-9][0-9]? años\."),
    "json_schema": lambda: compile_json_schema(SCHEMA),
    "cfg": lambda: compile_cfg(GBNF),
}


@pytest.fixture(scope="module")
def m64(model):
    return model.astype(np.float64)


def check_records(gen, grammar, m64, tok, temperature):
    """Every position's record against a full forward pass and the brute-force mask; returns
    (ln p(y | x), ln prod_j p(A_j)) computed independently."""
    ids, log_p, log_kept_sum = tok.encode(PROMPT), 0.0, 0.0
    state = grammar.automaton.start()
    for j, pos in enumerate(gen.positions):
        logp = next_logp(m64, ids + gen.token_ids[:j], temperature)  # no cache, full sequence
        allowed = np.flatnonzero(brute_force_mask(grammar.automaton, state, tok.vocab)).tolist()
        assert sorted(t for t, _, _ in pos.allowed) == allowed
        kept = math.exp(logsumexp(logp[allowed]))
        assert pos.kept_mass == pytest.approx(kept, rel=1e-9)
        assert sum(q for _, _, q in pos.allowed) == pytest.approx(1.0, abs=1e-12)
        assert all(p == pytest.approx(math.exp(logp[t]), rel=1e-9) for t, p, _ in pos.allowed)
        assert pos.p_chosen == pytest.approx(math.exp(logp[pos.chosen]), rel=1e-9)
        assert [t for t, _ in pos.top] == list(np.argsort(-logp, kind="stable")[:5])
        log_p += logp[pos.chosen]
        log_kept_sum += math.log(kept)
        for b in tok.vocab[pos.chosen]:
            state = grammar.automaton.step(state, b)
    return log_p, log_kept_sum


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("seed, temperature", [(0, 1.0), (3, 0.7)])
def test_masked_samples_are_texts_of_the_grammar_and_records_are_the_models(model, m64, tok, kind, seed,
                                                                            temperature):
    grammar = KINDS[kind]()
    gen = generate(model, tok, PROMPT, grammar, seed=seed, temperature=temperature)
    assert gen.status == "finished" and gen.complete
    assert grammar.accepts(gen.bytes)
    if kind == "json_schema":
        jsonschema.validate(json.loads(gen.text), SCHEMA)
    if kind == "choice":
        assert name_of(gen.text) in NAMES
    log_p, log_kept = check_records(gen, grammar, m64, tok, temperature)
    # the masked path probability equals p(y | x) / prod_j p(A_j | x, y_<j)
    assert gen.log_p == pytest.approx(log_p, rel=1e-9)
    assert gen.log_q == pytest.approx(log_p - log_kept, rel=1e-9, abs=1e-9)
    assert gen.log_kept == pytest.approx(log_kept, rel=1e-9, abs=1e-12)


def test_forced_positions_of_the_lesson_grammar_follow_the_definition(model, tok):
    oracle = FiniteGrammar([answer(n) for n in NAMES], tok.vocab)
    gen = generate(model, tok, PROMPT, compile_choice([answer(n) for n in NAMES]), seed=1)
    prefix = b""
    for pos in gen.positions:
        assert pos.forced == oracle.forced_kind(prefix)
        prefix += tok.vocab[pos.chosen]
    assert any(pos.forced == "split" for pos in gen.positions)
    assert sum(pos.forced is None for pos in gen.positions) == 1  # only the initial is a choice


def test_budget_reached_leaves_an_incomplete_text_and_says_so(model, tok):
    grammar = compile_json_schema(SCHEMA)
    gen = generate(model, tok, PROMPT, grammar, seed=0, max_tokens=4)
    assert gen.status == "budget" and not gen.complete and len(gen.token_ids) == 4
    assert not grammar.accepts(gen.bytes)
    html = gen._repr_html_()
    assert 'data-testid="budget-reached"' in html and "texto incompleto" in html
    assert 'data-accepted="false"' in html


def test_stop_at_accept_ends_at_the_first_complete_text(model, tok):
    grammar = compile_regex("[a-zñ ]+")  # every prefix is complete; never finished
    free = generate(model, tok, PROMPT, grammar, seed=2, max_tokens=12)
    assert free.status == "budget" and len(free.token_ids) == 12 and grammar.accepts(free.bytes)
    stop = generate(model, tok, PROMPT, grammar, seed=2, stop_at_accept=True)
    assert stop.status == "stopped" and len(stop.token_ids) == 1 and stop.token_ids == free.token_ids[:1]


@pytest.mark.parametrize("kind", ["regex", "json_schema"])
def test_top_k_one_is_greedy_among_the_allowed_tokens(model, m64, tok, kind):
    grammar = KINDS[kind]()
    gen = generate(model, tok, PROMPT, grammar, seed=9, top_k=1)
    assert grammar.accepts(gen.bytes)
    for pos in gen.positions:
        best = max(pos.allowed, key=lambda a: a[1])[0]
        assert pos.chosen == best and pos.q_chosen == 1.0


def test_truncation_matches_its_definition_on_random_distributions():
    rng = np.random.default_rng(0)
    for _ in range(200):
        q = rng.dirichlet(np.full(12, 0.5))
        ids = np.sort(rng.choice(12, size=rng.integers(1, 13), replace=False))
        q_allowed = np.zeros(12)
        q_allowed[ids] = q[ids] / q[ids].sum()
        k, p = int(rng.integers(1, 6)), float(rng.uniform(0.05, 1.0))
        ranked = sorted(ids.tolist(), key=lambda i: (-q_allowed[i], i))
        keep = ranked[:k]
        mass, top_p_keep = 0.0, []
        for i in keep:  # the smallest prefix whose mass reaches p
            top_p_keep.append(i)
            mass += q_allowed[i]
            if mass >= p * sum(q_allowed[keep]) - 1e-12:
                break
        out = truncate(q_allowed, ids, k, p)
        assert set(np.flatnonzero(out).tolist()) == set(top_p_keep)
        assert out.sum() == pytest.approx(1.0, abs=1e-12)


def test_near_zero_temperature_is_greedy_decoding(model, m64, tok):
    gen = generate(model, tok, PROMPT, seed=5, temperature=1e-4, max_tokens=8)
    greedy = []
    for _ in range(8):
        greedy.append(int(np.argmax(next_logp(m64, tok.encode(PROMPT) + greedy))))
    assert gen.token_ids == greedy and gen.status == "length"
    assert all(pos.allowed is None and pos.kept_mass is None for pos in gen.positions)


def test_same_seed_same_answer_and_unmasked_prose_has_no_brace(model, tok):
    grammar = KINDS["choice"]()
    first = generate(model, tok, PROMPT, grammar, seed=11)
    assert generate(model, tok, PROMPT, grammar, seed=11).token_ids == first.token_ids
    for seed in range(3):
        prose = generate(model, tok, PROMPT, seed=seed, max_tokens=30)
        assert len(prose.token_ids) == 30 and "{" not in prose.text


def test_bad_arguments_are_refused(model, tok):
    grammar = KINDS["choice"]()
    with pytest.raises(ValueError, match="temperature"):
        generate(model, tok, PROMPT, grammar, temperature=0)
    with pytest.raises(ValueError, match="prompt must hold"):
        generate(model, tok, "", grammar)
    with pytest.raises(ValueError, match="do not fit"):
        generate(model, tok, PROMPT, max_tokens=300)
    with pytest.raises(ValueError, match="top_k"):
        generate(model, tok, PROMPT, grammar, top_k=0)
    with pytest.raises(ValueError, match="top_p"):
        generate(model, tok, PROMPT, grammar, top_p=1.5)


def test_stepping_the_decoder_is_generate_and_a_picked_token_is_taken(model, tok):
    from lesson.sampling import Decoder
    grammar = KINDS["json_schema"]()
    whole = generate(model, tok, PROMPT, grammar, seed=5)
    decoder = Decoder(model, tok, PROMPT, grammar, seed=5)
    while not decoder.done:
        decoder.step()
    assert decoder.generation.token_ids == whole.token_ids and decoder.generation.status == whole.status
    with pytest.raises(RuntimeError, match="done"):
        decoder.step()

    decoder = Decoder(model, tok, PROMPT, grammar, seed=5)
    decoder.step()  # the forced "{"
    mask = decoder.matcher.mask()
    refused = next(t for t in range(len(tok.vocab)) if not mask[t])
    with pytest.raises(ValueError, match="not allowed"):
        decoder.step(token_id=refused)
    pick = int(np.flatnonzero(mask)[-1])  # an allowed token the sampler would hardly draw
    picked = decoder.step(token_id=pick)
    assert picked.chosen == pick and decoder.generation.token_ids[-1] == pick
    while not decoder.done:
        decoder.step()
    assert grammar.accepts(decoder.generation.bytes)
