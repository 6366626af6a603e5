"""lesson.early_abort.sample_until_invalid: unmasked answers that stop once they leave a grammar,
against a naive sampler that runs one answer at a time with full forward passes."""
from __future__ import annotations

import numpy as np
import pytest

from lesson import compile_choice, compile_regex, sample_until_invalid
from lesson.course import NAMES, PROMPT, answer
from tests.lesson.reference import next_logp


def naive_until_invalid(model, tok, prompt, grammar, n, seed, max_tokens, stop_at_accept=False,
                        longest=None):
    """Answer i alone: its own ``default_rng([seed, i])``, a full forward pass per token, and the
    grammar checked by running the automaton over the answer's bytes from the start."""
    m64 = model.astype(np.float64)
    auto = grammar.automaton
    out = []
    for i in range(n):
        rng, ids = np.random.default_rng([seed, i]), tok.encode(prompt)
        text, status, tokens, whole, written = b"", "budget", 0, 0, 0
        while whole < max_tokens:
            p = np.exp(next_logp(m64, ids))
            cumulative = np.cumsum(p)
            t = min(int((cumulative <= rng.random() * cumulative[-1]).sum()), len(p) - 1)
            ids, whole, written = ids + [t], whole + 1, written + len(tok.vocab[t])
            if status == "budget":
                text, tokens = text + tok.vocab[t], tokens + 1
                state = auto.start()
                for b in text:
                    state = auto.step(state, b) if state is not None else None
                if state is None:
                    status = "left"
                elif auto.is_accepting(state) and (stop_at_accept or not auto.can_continue(state)):
                    status = "complete"
                    break
            if status == "left" and (longest is None or written >= longest):
                break
        out.append((text, tokens, status, whole))
    return out


@pytest.mark.parametrize("pattern,prompt,stop", [(r"[a-z ]{1,6}", "El teléfono de doña Paca es el ", True),
                                                (r"(de|la|el) [a-z]+ ", "Y entonces", False)])
def test_it_draws_like_a_naive_one_answer_sampler(model, tok, pattern, prompt, stop):
    grammar = compile_regex(pattern)
    got = sample_until_invalid(model, tok, prompt, grammar, n=12, seed=5, max_tokens=6, stop_at_accept=stop)
    want = naive_until_invalid(model, tok, prompt, grammar, 12, 5, 6, stop)
    assert list(zip(got.texts, got.tokens, got.status)) == [w[:3] for w in want]
    assert got.tokens_whole == got.tokens  # without ``longest``, nothing runs off the record
    assert got.hits == sum(w[2] == "complete" for w in want)
    assert sum(got.died_at) == got.status.count("left") and got.hits + sum(got.died_at) <= got.n
    assert got.rows_computed == sum(k - 1 for k in got.tokens) <= got.rows_whole
    assert got.model_calls == max(got.tokens)


def test_with_longest_it_also_counts_the_answers_run_whole(model, tok):
    grammar = compile_choice([answer(n) for n in NAMES[:2]] + ["Benina ", "Rosalía "])
    longest = max(len(answer(n).encode()) for n in NAMES[:2])
    got = sample_until_invalid(model, tok, PROMPT, grammar, n=10, seed=2, max_tokens=20, longest=longest)
    want = naive_until_invalid(model, tok, PROMPT, grammar, 10, 2, 20, longest=longest)
    assert list(zip(got.texts, got.tokens, got.status, got.tokens_whole)) == want
    assert all(w >= k for w, k in zip(got.tokens_whole, got.tokens))


def test_a_later_batch_continues_the_same_answers(model, tok):
    grammar = compile_regex(r"[a-z ]{1,8}")
    whole = sample_until_invalid(model, tok, "Y entonces", grammar, n=6, seed=9, max_tokens=5)
    tail = sample_until_invalid(model, tok, "Y entonces", grammar, n=2, seed=9, max_tokens=5, first_row=4)
    assert tail.texts == whole.texts[4:] and tail.status == whole.status[4:]


def test_it_refuses_bad_sizes_by_name(model, tok):
    grammar = compile_regex(r"[0-9]+")
    with pytest.raises(ValueError, match="n and max_tokens"):
        sample_until_invalid(model, tok, "Hola", grammar, n=0)
    with pytest.raises(ValueError, match="n and max_tokens"):
        sample_until_invalid(model, tok, "Hola", grammar, n=2, max_tokens=0)
    with pytest.raises(ValueError, match="more than 10,000 samples"):  # refused before any array
        sample_until_invalid(model, tok, "Hola", grammar, n=10**9)
    with pytest.raises(ValueError, match="context"):
        sample_until_invalid(model, tok, "Hola", grammar, n=2, max_tokens=1000)
