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

from ..batch import sample_batch
from ..course import PROMPT
from ..early_abort import sample_until_invalid
from ..sampling import generate
from ..views import is_partial, token_label
from .forced import compare_fast_forward
from .route import crossings, regex_route
from .stack import NESTED_GBNF, bounded_regex, nested_prefix, stack_growth
from .trie import MaskIndex, trie_walk

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
DFA_DEPTHS = list(range(1, 7))
DEEP = 20                 # a nesting depth the recursive grammar takes in its stride
SCHEMA = {"type": "object", "properties": {"nombre": {"type": "string", "maxLength": 12}},
          "required": ["nombre"], "additionalProperties": False}
FF_SEEDS = [0, 1, 2, 3, 4]
PHONE = r"[6789]\d{2} \d{3} \d{3}"
PHONE_PROMPT = "El teléfono de doña Paca es el "
PHONE_N = 1000
PHONE_FREE_TOKENS = 11    # as many tokens as the longest masked answer has
BIG_VOCAB = 128_000
# Published: llguidance's README (github.com/guidance-ai/llguidance, "About"): a mask takes about
# 50 µs of single-core CPU time for a 128k-token tokenizer, e.g. with grammars from JSON schemas.
PUBLISHED = {"engine": "llguidance", "us_per_mask": 50, "vocab": 128_000,
             "source": "https://github.com/guidance-ai/llguidance"}


def route_figures(pattern: str) -> dict:
    route = regex_route(pattern)
    dfa = compile_regex(pattern).automaton
    return {"pattern": pattern, "nfa": route.nfa_states, "subset": route.subset_states,
            "states": route.min_states, "masker_states": dfa.n_states, "accepting": sum(dfa.accepting)}


def crossing_figures(vocab) -> dict:
    date = compile_regex(DATE)
    m = date.matcher(vocab)
    m.consume_bytes(CROSS_PREFIX)
    rows = crossings(date.automaton, vocab, m.state)
    word = compile_regex(WORD).automaton
    half = [c for c in crossings(word, vocab) if c.partial]
    return {"prefix": CROSS_PREFIX, "allowed": len(rows),
            "top": [{"label": token_label(c.piece), "edges": c.edges} for c in rows[:3]],
            "max_edges": rows[0].edges,
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
    big_table = states * math.ceil(BIG_VOCAB / 8)
    return {"prefix": WALK_PREFIX, "steps": w.steps, "brute": w.brute_steps, "vocab_bytes": w.vocab_bytes,
            "pruned": w.pruned_tokens, "pruned_root": sum(b.tokens for b in w.branches if not b.alive),
            "allowed": len(w.allowed), "root_branches": len(w.branches),
            "alive_branches": len(alive), "alive_bytes": [chr(b.byte) for b in alive],
            "index_states": states, "index_bytes": index.nbytes, "index_distinct": index.distinct,
            "big_vocab": BIG_VOCAB, "big_table_bytes": big_table,
            "big_brute_bytes": round(w.vocab_bytes / len(vocab) * BIG_VOCAB),
            "vocab_size": len(vocab), "published": PUBLISHED}


def stack_figures() -> dict:
    rows = stack_growth(DEPTHS, DFA_DEPTHS)
    cfg = compile_cfg(NESTED_GBNF)
    deep = nested_prefix(DEEP)
    closing = "".join("]" if k % 2 == 0 else "}" for k in reversed(range(DEEP)))
    deep_text = deep + "0" + closing
    last = DFA_DEPTHS[-1]
    refused = None  # the first depth past the table whose bounded DFA the masker refuses to build
    past = []  # the depths past the table that still build, with their states
    for d in (last + 1, last + 2):
        try:
            past.append({"depth": d, "states": compile_regex(bounded_regex(d)).automaton.n_states})
        except LimitExceeded:
            refused = d
            break
    return {"rows": [{"depth": r.depth, "earley": r.earley_items, "dfa": r.dfa_states} for r in rows],
            "deep": DEEP, "deep_accepted": cfg.accepts(deep_text),
            "deep_bounded": compile_regex(bounded_regex(last)).accepts(deep_text),
            "last_dfa_depth": last, "dfa_refused": refused, "dfa_past": past, "earley_per_level": rows[1].earley_items - rows[0].earley_items}


def fast_forward_figures(model, tok) -> dict:
    c = compare_fast_forward(model, tok, PROMPT, compile_json_schema(SCHEMA), FF_SEEDS)
    splits = c.opening_splits()
    bpe_p, bpe_q = c.bpe_logs
    return {"n": len(FF_SEEDS), "calls_stepwise": c.calls[0], "calls_fast": c.calls[1], "forced": c.forced,
            "valid_fast": c.valid[1], "opening": c.opening.decode(), "bpe_tokens": len(c.bpe),
            "bpe_split": [token_label(tok.vocab[t]) for t in c.bpe],
            "bpe_q": math.exp(bpe_q), "bpe_p_log10": bpe_p / math.log(10),
            "splits_seen": len(splits), "bpe_seen": any(list(s[0]) == c.bpe for s in splits),
            "fast_texts": [r.gen.text for r in c.fast]}


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
        "diagram": route_figures(DIAGRAM), "word": route_figures(WORD), "date": route_figures(DATE),
        "accented": [{"char": ch, "bytes": " ".join(f"{b:02X}" for b in ch.encode())} for ch in ACCENTED],
        "crossing": crossing_figures(vocab), "walk": walk_figures(vocab), "stack": stack_figures(),
        "fast": fast_forward_figures(model, tok), "phone": phone_figures(model, tok),
        "phone_pattern": PHONE, "phone_prompt": PHONE_PROMPT, "schema_max": SCHEMA["properties"]["nombre"]["maxLength"],
        "vocab_size": len(vocab), "month_count": len(MONTHS),
    }
