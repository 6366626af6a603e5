"""The batch sampler draws each row from the masked distribution that the exact enumeration
computes, ends rows by the same rule as ``generate``, and keeps every answer in the grammar."""

import math

import pytest

from lesson.batch import sample_batch
from lesson.enumeration import enumerate_paths
from lesson.course import NAMES, PROMPT
from masker import compile_choice, compile_json_schema, compile_regex


def test_rows_follow_the_exact_masked_distribution(model, tok):
    grammar = compile_choice(NAMES)
    exact = enumerate_paths(model, tok, PROMPT, grammar)
    n = 3000
    gens = sample_batch(model, tok, PROMPT, grammar, n=n, seed=1)
    counts = {}
    for gen in gens:
        counts[gen.bytes] = counts.get(gen.bytes, 0) + 1
    for row in exact.rows:
        expected = row.masked * n
        sd = math.sqrt(n * row.masked * (1 - row.masked)) + 1e-9
        assert abs(counts.get(row.text, 0) - expected) <= 5 * sd + 1, row.label
    assert sum(counts.values()) == n


def test_each_row_records_the_probabilities_of_its_own_path(model, tok):
    grammar = compile_choice(NAMES)
    exact = enumerate_paths(model, tok, PROMPT, grammar)
    for gen in sample_batch(model, tok, PROMPT, grammar, n=40, seed=2):
        assert gen.status == "finished" and gen.complete
        assert gen.bytes.decode() in NAMES
        # log q of the path equals log p minus the log kept masses along it
        assert gen.log_q == pytest.approx(gen.log_p - gen.log_kept, abs=1e-9)
        # a path's q is at most its text's masked probability
        assert math.exp(gen.log_q) <= exact.row(gen.bytes).masked * (1 + 1e-9)


def test_budget_and_length_statuses(model, tok):
    grammar = compile_regex(r"[a-z]{20}")
    gens = sample_batch(model, tok, PROMPT, grammar, n=8, seed=3, max_tokens=3)
    assert all(gen.status == "budget" and not gen.complete and len(gen.token_ids) == 3 for gen in gens)
    free = sample_batch(model, tok, PROMPT, None, n=5, seed=3, max_tokens=7)
    assert all(gen.status == "length" and len(gen.token_ids) == 7 and gen.positions[0].kept_mass is None
               for gen in free)


def test_schema_rows_are_valid_and_truncation_stays_inside_the_mask(model, tok):
    schema = {"type": "object", "properties": {"nombre": {"enum": NAMES}}, "required": ["nombre"],
              "additionalProperties": False}
    grammar = compile_json_schema(schema)
    gens = sample_batch(model, tok, PROMPT, grammar, n=30, seed=4, top_k=3, top_p=0.9, forced=True)
    for gen in gens:
        assert grammar.accepts(gen.bytes)
        assert all(pos.q_chosen > 0 for pos in gen.positions)
    assert any(pos.forced for gen in gens for pos in gen.positions)


def test_same_seed_same_answers_and_bad_arguments(model, tok):
    grammar = compile_choice(NAMES)
    a = [g.token_ids for g in sample_batch(model, tok, PROMPT, grammar, n=10, seed=5)]
    b = [g.token_ids for g in sample_batch(model, tok, PROMPT, grammar, n=10, seed=5)]
    assert a == b
    for n in (0, 10**9):
        with pytest.raises(ValueError, match="n must be between"):
            sample_batch(model, tok, PROMPT, grammar, n=n)
    with pytest.raises(ValueError, match="temperature"):
        sample_batch(model, tok, PROMPT, grammar, n=2, temperature=0)
    with pytest.raises(ValueError, match="max_tokens must be at least 1"):
        sample_batch(model, tok, PROMPT, grammar, n=2, max_tokens=0)
    with pytest.raises(ValueError, match="context"):
        sample_batch(model, tok, PROMPT, None, n=2, max_tokens=10_000)


@pytest.mark.parametrize("grammar", [None, compile_choice(NAMES)], ids=["unmasked", "names"])
def test_stats_count_one_model_row_per_distinct_prefix(model, tok, grammar):
    """``stats``' model rows are the distinct prefixes still being written at each position (the
    prompt alone at the first; recounted from the answers), one call per position of the longest
    answer, and its times are parts of the whole call."""
    stats = {}
    gens = sample_batch(model, tok, PROMPT, grammar, n=60, seed=3, max_tokens=6, stats=stats)
    longest = max(len(g.token_ids) for g in gens)
    rows = 0
    for j in range(longest):  # position j+1's distributions come from the prefixes of length j still going
        rows += len({tuple(g.token_ids[:j]) for g in gens if len(g.token_ids) > j})
    assert stats["model_rows"] == rows and stats["model_calls"] == longest
    assert rows < 60 * longest  # shared prefixes: fewer rows than answers × calls
    assert 0 < stats["model_seconds"] and 0 <= stats["mask_seconds"]
    assert stats["model_seconds"] + stats["mask_seconds"] <= stats["seconds"]
    if grammar is None:
        assert stats["mask_seconds"] == 0
