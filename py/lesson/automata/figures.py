"""Every number that the prose of «Del esquema al autómata» quotes, computed from the weights.

The build calls :func:`compute_figures` in CPython (see ``sitebuild.figures.lesson_figures``); the page's cells
compute the same things live with the same functions and the constants below, which are also the
defaults of the cells. Figures from elsewhere (``PUBLISHED``) carry their source.
"""

from __future__ import annotations

import math
import re


from masker import compile_cfg, compile_json_schema, compile_regex
from masker.errors import LimitExceeded
from masker.literal_dfa import literal_set_dfa

from ..batch import sample_batch
from ..course import PROMPT
from ..early_abort import sample_until_invalid
from ..sampling import generate
from ..views import is_partial, token_label
from .dfa_check import PHONE
from .phones import PhoneCheck
from .forced import compare_fast_forward, exact_splits, path_probability
from .route import crossings, keys_regex, regex_route
from .stack import NESTED_GBNF, bounded_regex, nested_prefix, stack_growth
from .scale import SCALE_VOCAB, answer_positions, date_mask_costs, real_trie
from .trie import MaskIndex, brute_steps, trie_walk

YES_NO = "sí|no"
YES_NO_PROMPT = "¿Es Benina la protagonista? Responde sí o no.\n"
DIAGRAM = r"[sS][íi]|[nN]o"
WORD = r"[a-zñáéíóú]+"
ACCENTED = "áéíóúñ"
MONTHS = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre",
          "octubre", "noviembre", "diciembre"]
DATE = r"\d{1,2} de (" + "|".join(MONTHS) + r") de \d{4}"
CROSS_PREFIX = "12 "      # where the token «de » walks three edges at once
WALK_PREFIX = "12 de "    # the state whose trie walk the page traces
JSON_TOKENS = ['":"', '"}', '{"']  # tokens a JSON-trained vocabulary would have
DEPTHS = list(range(1, 9))
DFA_DEPTHS = list(range(1, 8))
LIFTED_MAX_STATES = 200_000  # the subset construction's limit for the one route the masker refuses
DEEP = 20                 # a nesting depth the recursive grammar takes in its stride
SCHEMA = {"type": "object", "properties": {"nombre": {"type": "string", "maxLength": 12}},
          "required": ["nombre"], "additionalProperties": False}
FF_SEEDS = [0, 1, 2, 3, 4]
PHONE_PROMPT = "El teléfono de doña Paca es el "
PHONE_N = 1000
PHONE_FREE_TOKENS = 11    # as many tokens as the longest masked answer has
BIG_VOCAB = 128_000
STRING = r'"([^"\\]|\\.)*"'  # a quoted string: inside it nearly every token is allowed
STRING_PREFIX = '"'
SCALE_SCHEMA = {"type": "object", "properties": {"nombre": {"type": "string"},
                                                 "edad": {"type": "integer"}},
                "required": ["nombre", "edad"], "additionalProperties": False}
SCALE_ANSWER = {"nombre": "Benina", "edad": 60}
# Published: llguidance's README (github.com/guidance-ai/llguidance, "About"): a mask takes on average
# about 50 µs of single-core CPU time for a 128k-token tokenizer (JSON Schema Bench; p99 0.5 ms).
PUBLISHED = {"engine": "llguidance", "us_per_mask": 50, "vocab": 128_000,
             "source": "https://github.com/guidance-ai/llguidance"}


def route_figures(pattern: str) -> dict:
    route = regex_route(pattern)
    dfa = compile_regex(pattern).automaton
    return {"pattern": pattern, "nfa": route.nfa_states, "subset": route.subset_states,
            "states": route.min_states, "masker_states": dfa.n_states, "accepting": sum(dfa.accepting)}


def months_figures() -> dict:
    """The month alternation as the masker splices it into the date's NFA: the minimal DFA of the
    twelve texts (``masker.literal_dfa``), against their total length in bytes."""
    texts = [m.encode() for m in MONTHS]
    return {"months_bytes": sum(map(len, texts)), "months_states": literal_set_dfa(texts)[0].n_states}


WORD_U = r"[a-zñáéíóúü]+"  # the word class with one more two-byte letter (ü: C3 BC), for a quiz
ORDER_KEYS = [1, 2, 3, 4, 5]  # objects of k keys ("a":0, "b":0, …), in a fixed order or in any order


def order_figures() -> dict:
    """Minimal DFA states of an object of k keys, fixed order against any order (the quiz on the
    index): the first grows by a constant per key, the second more than doubles."""
    fixed = [compile_regex(keys_regex(k, False)).automaton.n_states for k in ORDER_KEYS]
    anyo = [compile_regex(keys_regex(k, True)).automaton.n_states for k in ORDER_KEYS]
    return {"keys": ORDER_KEYS, "fixed": fixed, "any": anyo,
            "fixed_steps": sorted({b - a for a, b in zip(fixed, fixed[1:])}),
            "any_doubles": all(b >= 2 * a for a, b in zip(anyo, anyo[1:]))}


def crossing_figures(vocab) -> dict:
    date = compile_regex(DATE)
    m = date.matcher(vocab)
    m.consume_bytes(CROSS_PREFIX)
    rows = crossings(date.automaton, vocab, m.state)
    word = compile_regex(WORD).automaton
    half = [c for c in crossings(word, vocab) if c.partial]
    return {"prefix": CROSS_PREFIX, "allowed": len(rows),
            "top": [{"label": token_label(c.piece), "edges": c.edges} for c in rows[:3]],
            "max_edges": rows[0].edges, "top_tied": sum(c.edges == rows[0].edges for c in rows),
            "partial_vocab": sum(is_partial(v) for v in vocab),
            "partial_merges": sum(is_partial(v) and len(v) > 1 for v in vocab),
            "partial_word": len(half),
            "partial_examples": [{"label": token_label(c.piece), "partial": True} for c in half[:4]],
            "json_in_vocab": [t for t in JSON_TOKENS if t.encode() in set(vocab)],
            "json_missing": [t for t in JSON_TOKENS if t.encode() not in set(vocab)]}


def walk_figures(vocab) -> dict:
    date = compile_regex(DATE)
    m = date.matcher(vocab)
    m.consume_bytes(WALK_PREFIX)
    w = trie_walk(date.automaton, m.state, vocab)
    index = MaskIndex(date, vocab)
    states = index.dfa.n_states
    alive = [b for b in w.branches if b.alive]
    pieces = set(vocab)
    big_table = states * math.ceil(BIG_VOCAB / 8)
    return {"prefix": WALK_PREFIX, "steps": w.steps, "brute": w.brute_steps, "vocab_bytes": w.vocab_bytes,
            "pruned": w.pruned_tokens, "dead_steps": w.dead_steps, "pruned_root": w.pruned_root, "pruned_inside": w.pruned_inside,
            "refused_visited": w.refused_visited, "unvisited": w.unvisited,
            "dead_branches": len(w.branches) - len(alive), "unvisited_from": w.unvisited_from(),
            # tokens at the nodes of the root's dead branches: with every byte a token, one per branch
            "dead_root_tokens": sum(bytes([b.byte]) in pieces for b in w.branches if not b.alive),
            "allowed": len(w.allowed), "root_branches": len(w.branches),
            "alive_branches": len(alive), "alive_bytes": [chr(b.byte) for b in alive],
            "index_states": states, "index_bytes": index.nbytes, "index_distinct": index.distinct,
            "big_vocab": BIG_VOCAB, "big_table_bytes": big_table,
            "big_brute_bytes": round(w.vocab_bytes / len(vocab) * BIG_VOCAB),
            "vocab_size": len(vocab), "published": PUBLISHED}


def scale_figures() -> dict:
    """§4 on ``o200k_base`` (``scale.py``): the trie, one narrow and one wide mask (their counts
    and the trie edges walked per level; the times are the cell's, measured where it runs) and
    the positions of the JSON answer."""
    from vocabularies import load, pack
    real = real_trie(SCALE_VOCAB)
    data, _ = pack(load(SCALE_VOCAB))

    def costs(pattern, prefix):
        c = date_mask_costs(real, pattern, prefix, min_time=0)
        dfa = compile_regex(pattern).automaton
        state = dfa.start()
        for b in prefix.encode():
            state = dfa.step(state, b)
        brute = brute_steps(dfa, state, real.tokens)
        return {"allowed": c.allowed, "same": c.same, "edges": c.edges,
                "brute_steps": brute, "brute_ratio": round(brute / c.edges, 1),
                "levels": len(c.level_edges), "widest": max(c.level_edges),
                "index_states": c.index_states, "index_bytes": c.index_bytes}

    positions = answer_positions(real, SCALE_SCHEMA, SCALE_ANSWER)
    written, after, few = b"", {}, {}
    for p in positions:
        after[written], few[written] = p.allowed, p.few
        written += p.text
    crossing = [p.label for p in positions if p.crosses]
    return {"vocab": SCALE_VOCAB, "n_tokens": real.n_tokens, "nodes": real.nodes,
            "arrays_mib": round(real.arrays_bytes / 2**20, 1), "longest": real.longest,
            "download_mb": round(len(data) / 1e6, 1),
            "date": costs(DATE, WALK_PREFIX), "string": costs(STRING, STRING_PREFIX),
            "string_prefix": STRING_PREFIX, "answer": written.decode(),
            "positions": len(positions), "after_open": after.get(b'{"'),
            "after_open_tokens": few.get(b'{"', []),
            "forced": sum(p.forced for p in positions),
            "one_first_byte": sum(p.first_bytes == 1 and p.allowed > 1 for p in positions),
            "crossing": crossing, "crossing_count": len(crossing),
            "max_allowed": max(p.allowed for p in positions),
            "min_allowed": min(p.allowed for p in positions)}


def refused_route(depth: int, limit: int) -> dict:
    """The route of ``bounded_regex(depth)`` that the masker refuses, built anyway with the subset
    construction's limit lifted (``LIFTED_MAX_STATES``; about 1 s in CPython at depth 8, so only at
    build time, never in a cell): where the limit bites (the subset construction, before
    minimizing) and how small the minimal DFA would have been."""
    route = regex_route(bounded_regex(depth), max_states=LIFTED_MAX_STATES)
    return {"refused_nfa": route.nfa_states, "refused_subset": route.subset_states,
            "refused_min": route.min_states, "refused_min_under_limit": route.min_states < limit}


def stack_figures() -> dict:
    rows = stack_growth(DEPTHS, DFA_DEPTHS)
    cfg = compile_cfg(NESTED_GBNF)
    deep = nested_prefix(DEEP)
    closing = "".join("]" if k % 2 == 0 else "}" for k in reversed(range(DEEP)))
    deep_text = deep + "0" + closing
    last = DFA_DEPTHS[-1]
    refused = refused_limit = None  # the first depth past the table that the masker refuses to build
    past = []  # the depths past the table that still build, with their states
    for d in (last + 1, last + 2):
        try:
            past.append({"depth": d, "states": compile_regex(bounded_regex(d)).automaton.n_states})
        except LimitExceeded as e:
            refused, refused_limit = d, e.value
            break
    lifted = refused_route(refused, refused_limit) if refused else {}
    dfa = [r.dfa_states for r in rows if r.dfa_states]
    offsets = sorted({b - 2 * a for a, b in zip(dfa, dfa[1:])})  # s(d) = 2 s(d-1) + offset?
    current = {r.current_items for r in rows if r.depth > 0}
    return {"rows": [{"depth": r.depth, "earley": r.earley_items, "dfa": r.dfa_states, "current": r.current_items}
                     for r in rows],
            # «el conjunto actual tiene siempre N»: the current set alone is the same at every depth
            "current_constant": current.pop() if len(current) == 1 else None,
            "refused_limit": refused_limit, "doubling_offsets": offsets, **lifted,
            "min_ratio": min(b / a for a, b in zip(dfa, dfa[1:])),
            "deep": DEEP, "deep_accepted": cfg.accepts(deep_text),
            "deep_bounded": compile_regex(bounded_regex(last)).accepts(deep_text),
            "last_dfa_depth": last, "dfa_refused": refused, "dfa_past": past, "earley_per_level": rows[1].earley_items - rows[0].earley_items}


def all_splits_figures(model, tok, grammar, opening: bytes, bpe: list[int]) -> dict:
    """Every exact split of the forced opening with its p and q~ (``path_probability``): how many
    there are, the rank of the BPE split by p (1 = the most likely) and the most likely split."""
    rows = sorted(((ids, *path_probability(model, tok, PROMPT, grammar, ids))
                   for ids in exact_splits(tok.vocab, opening)), key=lambda r: -r[1])
    best, rank = rows[0], [r[0] for r in rows].index(list(bpe))
    return {"all_splits": len(rows), "bpe_rank": rank + 1, "best_is_bpe": rank == 0,
            "best_split": [token_label(tok.vocab[t]) for t in best[0]],
            "best_p": math.exp(best[1]), "bpe_p": math.exp(rows[rank][1]), "best_over_bpe": math.exp(best[1] - rows[rank][1]),
            "q_sum": sum(math.exp(r[2]) for r in rows)}


def fast_forward_figures(model, tok) -> dict:
    grammar = compile_json_schema(SCHEMA)
    c = compare_fast_forward(model, tok, PROMPT, grammar, FF_SEEDS)
    splits = c.opening_splits()
    bpe_p, bpe_q = c.bpe_logs
    inv = c.inversion()
    return {"n": len(FF_SEEDS), "calls_stepwise": c.calls[0], "calls_fast": c.calls[1], "forced": c.forced,
            "valid_fast": c.valid[1], "opening": c.opening.decode(), "bpe_tokens": len(c.bpe),
            "bpe_split": [token_label(tok.vocab[t]) for t in c.bpe],
            "bpe_q": math.exp(bpe_q), "bpe_p_log10": bpe_p / math.log(10),
            "splits_seen": len(splits), "bpe_seen": any(list(s[0]) == c.bpe for s in splits),
            "fast_texts": [r.gen.text for r in c.fast],
            "inversion": None if inv is None else {
                "low": [token_label(tok.vocab[t]) for t in inv["low"]], "low_is_bpe": inv["low"] == c.bpe,
                "high": [token_label(tok.vocab[t]) for t in inv["high"]], "high_is_bpe": inv["high"] == c.bpe,
                "p_ratio": inv["p_ratio"], "q_ratio": inv["q_ratio"]},
            # straight quotes in the tokenizer's merges: none means the corpus never put them together
            "quote_merges": sum(b'"' in v and len(v) > 1 for v in tok.vocab)} | all_splits_figures(
                model, tok, grammar, c.opening, c.bpe)


def phone_figures(model, tok) -> dict:
    grammar = compile_regex(PHONE)
    masked = sample_batch(model, tok, PHONE_PROMPT, grammar, n=PHONE_N, seed=0)
    free = sample_until_invalid(model, tok, PHONE_PROMPT, grammar, n=PHONE_N, seed=0,
                                max_tokens=PHONE_FREE_TOKENS)
    texts = [g.text for g in masked]
    return {"n": PHONE_N, "invalid": sum(re.fullmatch(PHONE, t) is None for t in texts),
            "distinct": len(set(texts)), "first": texts[:3],
            "free_valid": free.hits, "free_first_dead": free.died_at[0],
            "free_digit_start": sum(t[:1].isdigit() for t in free.texts),
            # of the samples that left the pattern with their first token, those that began with a digit
            "free_first_dead_digit": PhoneCheck.first_dead_digits_of(free),
            "free_rows": free.rows_computed, "free_rows_whole": free.rows_whole,
            "masked_rows": sum(len(g.token_ids) - 1 for g in masked),
            # what sample_batch runs: one row per distinct token prefix (samples that begin alike share it)
            "masked_rows_shared": len({tuple(g.token_ids[:k]) for g in masked
                                       for k in range(1, len(g.token_ids))}),
            "states": grammar.automaton.n_states}


def hand_loop_figures(model, tok) -> dict:
    gen = generate(model, tok, YES_NO_PROMPT, compile_regex(YES_NO), seed=0)
    return {"text": gen.text, "tokens": [token_label(tok.vocab[t]) for t in gen.token_ids]}


def compute_figures(model, tok) -> dict:
    """Every figure the page quotes (plain JSON data). Takes a few seconds in CPython (the 2,000
    phone samples are most of it)."""
    vocab = tok.vocab
    return {
        "yes_no": YES_NO, "yes_no_prompt": YES_NO_PROMPT, "stack_gbnf": NESTED_GBNF,
        "yes_no_states": compile_regex(YES_NO).automaton.n_states, "hand": hand_loop_figures(model, tok),
        "diagram": route_figures(DIAGRAM), "word": route_figures(WORD), "date": route_figures(DATE) | months_figures(),
        "accented": [{"char": ch, "bytes": " ".join(f"{b:02X}" for b in ch.encode())} for ch in ACCENTED],
        "crossing": crossing_figures(vocab), "walk": walk_figures(vocab), "stack": stack_figures(),
        "fast": fast_forward_figures(model, tok), "phone": phone_figures(model, tok),
        "phone_pattern": PHONE, "phone_prompt": PHONE_PROMPT, "schema_max": SCHEMA["properties"]["nombre"]["maxLength"],
        "vocab_size": len(vocab), "month_count": len(MONTHS), "order": order_figures(),
        "word_u": route_figures(WORD_U), "scale": scale_figures(),
    }
