"""Every number that the lesson's prose quotes, computed from the committed weights.

The build calls :func:`compute_figures` in CPython and hands the result (plain JSON data) to the
templates, so no figure in the text is typed by hand; the page's cells compute the same numbers live
with the same functions. The defaults below are also the defaults of the page's cells.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np

from minigpt.gpt import softmax

from masker import compile_choice, compile_json_schema, compile_regex

from ..course import KEY, NAMES, OTHER_KEY, PROMPT, PROTAGONIST, answer, name_of
from ..enumeration import enumerate_paths
from ..i18n import each_language
from ..token_language import allowed_ids, count_paths, count_positions
from ..rejection import rejection_sample
from ..sampling import generate
from ..views import PositionsView, is_partial, token_label
from .picture import factors_svg, names_svg
from .why import crossing_forks, path_steps, ratio_split, split_factors, token_splits

MASKED_SEEDS = [0, 1, 2, 3, 4]
FLOOR_FACTOR = 1.5  # «el suelo»: tokens within this factor of the least probable one
UNMASKED_SEEDS = [0, 1, 2]
UNMASKED_TOKENS = 30
WALK_SEED = 0  # the masked sample walked through position by position
UTF8_NAME = "Doña Paca"  # a name with a two-byte letter
UTF8_PREFIX = '{"%s":"Do' % KEY  # the text of UTF8_NAME up to its two-byte letter
# A grammar the model does write now and then: the three novels' protagonists, each followed by a
# space (the end of the word), for the live rejection sampler.
REACHABLE = ["Rosalía ", "Benina ", "Tristana "]
REJECTION_ACCEPTED = 20
# How strong the evidence for the conditional against the mask should be, on average, before the
# rejection sampler's answers tell the two apart: a likelihood ratio of 20 to 1.
EVIDENCE_ODDS = 20
LONG_ANSWER = (0.99, 200)  # a kept mass per position, and a number of positions (section 8)
SWEEP_TEMPERATURES = [0.5, 1.0, 2.0]
# A free-text field: how likely is the model to close the quote, position by position?
SHORT, LONG = "Benina", "Benina Casia"  # the cell «prefijo»: a text that is a proper prefix of another
FREE_TEXT = r'\{"nombre":"[^"]*"\}'
FREE_TEXT_TOKENS = 80
# The cell «Una expresión regular y un JSON Schema» (seed 0 for both).
ANY_PATTERN = r"(Benina|Obdulia) tiene [1-9][0-9]? años\."
ANY_SCHEMA = {"type": "object",
              "properties": {"nombre": {"type": "string", "maxLength": 8},
                             "edad": {"type": "integer", "minimum": 0, "maximum": 120}},
              "required": ["nombre", "edad"], "additionalProperties": False}


def compute_figures(model, tok) -> dict:
    """All figures of the lesson as JSON-ready data (floats unrounded; the templates format them)."""
    grammar = compile_choice([answer(n) for n in NAMES])
    out = {"prompt": PROMPT, "names": NAMES, "protagonist": PROTAGONIST, "key": KEY,
           "texts": [answer(n) for n in NAMES], "model_alone": model_alone(model, tok)}
    masked = [generate(model, tok, PROMPT, grammar, seed=s) for s in MASKED_SEEDS]
    out["masked"] = [sample_summary(g, tok) for g in masked]
    out["unmasked"] = [{"seed": s, "text": generate(model, tok, PROMPT, seed=s, max_tokens=UNMASKED_TOKENS).text}
                       for s in UNMASKED_SEEDS]
    walk = masked[MASKED_SEEDS.index(WALK_SEED)]
    out["walk"] = walk_summary(walk, tok, model, grammar)
    # the picture at the top of the page: the same view a cell shows, rendered at build time, in
    # each edition's language ({"es": html, "en": html})
    out["walk_view"] = each_language(lambda: PositionsView(walk, uid="pv-portada")._repr_html_())
    forced = len(out["walk"]["written"].encode())
    out["walk"]["splits_in_samples"] = len({g.prefix_split(forced) for g in masked})
    out["utf8"] = utf8_example(tok)
    out["enumeration"] = enumeration_summary(model, tok, grammar)
    out["walk"].update(table_gaps(out["walk"], out["enumeration"]["rows"]))
    out["initials_by_split"] = initials_by_split(model, tok, grammar, out["walk"], out["enumeration"]["rows"])
    out["sweep"] = temperature_sweep(model, tok, grammar)
    out["sweep_colder_concentrates"] = colder_concentrates(out["sweep"])
    out["sweep_changes"] = favourite_changes(out["sweep"])
    out["rejection"] = rejection_summary(model, tok)
    out["toy"] = toy_example()
    out["any_grammar"] = any_grammar(model, tok)
    out["free_text"] = free_text(model, tok)
    out["prefix_rules"] = prefix_rules(model, tok)
    out["inflated"] = after_initial(model, tok, walk, out["enumeration"]["most_inflated"]["name"])
    out["why"] = why_inflated(model, tok, walk, out["walk"])
    out["factors_svg"] = each_language(factors_svg, out["why"])
    out["partitions"] = partition_distortion(masked, walk, out["walk"])
    out["names_svg"] = each_language(names_svg, out["enumeration"]["rows"])
    kept, positions = LONG_ANSWER
    out["long_answer"] = {"kept": kept, "positions": positions, "product": kept ** positions}
    return out


def table_gaps(walk: dict, rows: list[dict]) -> dict:
    """How far the walk's table is from the exact enumeration's ``rows``, name by name:
    ``table_gap``, the largest gap between the walk's conditional (one split of the prefix) and the
    exact one (all splits); ``mask_gap``, between the mask's q~ of each initial at the walk's
    choice and the mask's column of the table (which sums over the splits the mask draws)."""
    exact = {r["name"]: r["conditional"] for r in rows}
    masked = {r["name"]: r["masked"] for r in rows}
    return {"table_gap": max(abs(a["conditional"] - exact[a["name"]]) for a in walk["allowed"]),
            "mask_gap": max(abs(a["q"] - masked[a["name"]]) for a in walk["allowed"])}


def initials_by_split(model, tok, grammar, walk: dict, rows: list[dict]) -> dict:
    """«No coinciden del todo porque…»: the mask's q~ of each token split of the forced prefix
    (the walk's ``written``: the product of its masked steps) and, after each split, its q~ of
    the initial of ``name`` (the name with the largest ``mask_gap``); their weighted sum is that
    name's masked probability in the exact table (``rows``), up to the splits' own end. Returns
    ``name``, ``splits`` (the two heaviest, each ``{"tokens", "weight", "q"}``, labels as text),
    ``sum`` (Σ weight × q over every split) and ``table`` (the table's q~ of the name)."""
    masked = {r["name"]: r["masked"] for r in rows}
    name = max(walk["allowed"], key=lambda a: abs(a["q"] - masked[a["name"]]))["name"]
    initial = name[0].encode()
    m64 = model.astype(np.float64)
    prompt_ids = tok.encode(PROMPT)
    prefix = walk["written"].encode()
    out = []

    def walk_splits(matcher, ids: list[int], written: bytes, weight: float):
        p = softmax(m64.forward(np.array([prompt_ids + ids]))[0, -1])
        mask = matcher.mask()
        kept = float(p[mask].sum())
        if written == prefix:
            v = tok.vocab.index(initial)
            out.append({"tokens": [token_label(tok.vocab[t]) for t in ids], "weight": weight,
                        "q": float(p[v]) / kept if mask[v] else 0.0})
            return
        for v in np.flatnonzero(mask):
            nxt = written + tok.vocab[v]
            if prefix.startswith(nxt):
                child = matcher.fork()
                child.consume(int(v))
                walk_splits(child, ids + [int(v)], nxt, weight * float(p[v]) / kept)

    walk_splits(grammar.matcher(tok.vocab), [], b"", 1.0)
    out.sort(key=lambda r: -r["weight"])
    return {"name": name, "splits": out[:2], "count": len(out),
            "sum": sum(r["weight"] * r["q"] for r in out), "table": masked[name]}


def colder_concentrates(sweep: list[dict]) -> bool:
    """The prose's «de 1 a 0,5, bajar la temperatura exagera la preferencia de cada una»: at the
    coldest temperature of the sweep both leaders' shares are above their shares at T = 1."""
    cold = min(sweep, key=lambda r: r["temperature"])
    one = next(r for r in sweep if r["temperature"] == 1.0)
    return cold["top_conditional_p"] > one["top_conditional_p"] and cold["top_masked_q"] > one["top_masked_q"]


def favourite_changes(sweep: list[dict]) -> list[dict]:
    """Where the sweep's favourites differ from those at T = 1: one entry per temperature and
    distribution (``who``: "condicionada" or "máscara", the Spanish prose's word; ``kind``:
    "conditional" or "masked", a code each edition words itself) whose most likely name is not the
    one at T = 1, with that ``name`` and its probability ``p``, in the sweep's order."""
    one = next(r for r in sweep if r["temperature"] == 1.0)
    out = []
    for r in sweep:
        for who, kind in (("condicionada", "conditional"), ("máscara", "masked")):
            key = "top_" + kind
            if r[key] != one[key]:
                p = r["top_conditional_p"] if kind == "conditional" else r["top_masked_q"]
                out.append({"temperature": r["temperature"], "who": who, "kind": kind, "name": r[key], "p": p})
    return out


def why_inflated(model, tok, gen, walk: dict) -> dict:
    """The walk table's largest over smallest chance to finish (``walk["allowed"]``'s "finish"),
    split into factors along the most likely paths (:func:`lesson.mascara.why.ratio_split`), with
    the names of both initials."""
    by_finish = sorted(walk["allowed"], key=lambda a: a["finish"])
    small, big = by_finish[0]["name"], by_finish[-1]["name"]
    first = walk["forced_before"]
    return ratio_split(model, tok, gen.token_ids[:first], big, small)


def partition_distortion(masked: list, walk_gen, walk: dict) -> dict:
    """The first distortion a reader can see: the token splits of the forced prefix.

    ``model_other``: the share of the unmasked model's p(prefix | x) that the other splits hold
    (1 − the walk's split share); ``mask_walk``: the masked probability of the walk's split (its
    q~ multiplied along the forced positions), ``mask_other`` = 1 − that; ``ratio`` = mask_other /
    model_other and ``ratio_rounded``, the same to two significant figures (the prose's «about
    1,300 times»); ``samples_other``: how
    many of the masked samples wrote the prefix with another split, ``samples_bpe`` how many with
    the tokenizer's own (BPE) split; ``position`` (1-based), the
    first position where a sample leaves the walk's split, with the walk's token and the other
    allowed tokens there and their q~."""
    first = walk["forced_before"]
    split = tuple(walk_gen.token_ids[:first])
    n_bytes = len(walk["written"].encode())
    others = [g for g in masked if g.prefix_split(n_bytes) != split]
    j = min((next(k for k, t in enumerate(g.token_ids) if k >= len(split) or t != split[k])
             for g in others), default=None)
    log_q = sum(math.log(p.q_chosen) for p in walk_gen.positions[:first])
    bpe_prefix = sum([token_label(walk_gen.vocab[t]) for t in g.prefix_split(n_bytes)] == walk["bpe_split"]
                     for g in masked)
    model_other, mask_other = 1 - walk["split_share"], 1 - math.exp(log_q)
    ratio = mask_other / model_other
    out = {"model_other": model_other, "samples_bpe": bpe_prefix, "mask_walk": math.exp(log_q),
           "mask_other": mask_other, "ratio": ratio, "ratio_rounded": float(f"{ratio:.2g}"),
           "samples_other": len(others), "samples": len(masked), "position": None}
    if j is not None:
        pos, vocab = walk_gen.positions[j], walk_gen.vocab
        out.update(position=j + 1, walk_token=token_label(vocab[pos.chosen]), walk_q=pos.q_chosen,
                   other=[{"label": token_label(vocab[t]), "q": q} for t, _, q in pos.allowed
                          if t != pos.chosen])
    return out


def crossing_tokens(tok, short: str = SHORT, long: str = LONG) -> list[bytes]:
    """The tokens that, inside ``long``, start before the end of its prefix ``short`` and end after
    it (vocabulary order): a token path of ``long`` has no token boundary at the end of ``short``
    exactly when one of its tokens is one of these."""
    text, n = long.encode(), len(short.encode())
    return [v for v in tok.vocab if any(i < n < i + len(v) and text[i:i + len(v)] == v for i in range(n))]


def prefix_rules(model, tok) -> dict:
    """The cell «prefijo»: G = {SHORT, LONG} after PROMPT, whose SHORT is a proper prefix of LONG,
    enumerated exactly (``enumerate_paths``) under each end rule: ``default`` (the loop goes on
    while a token can follow) and ``stop`` (``stop_at_accept=True``: it stops at the first token
    boundary where the text is complete). Each rule gives ``short`` and ``long``, each
    ``{"paths", "conditional", "masked"}`` (0 paths and 0.0 for a text the rule never writes).
    ``crossing``: the labels of ``crossing_tokens``, the only way LONG is written under ``stop``."""
    grammar = compile_choice([SHORT, LONG])
    out = {"short_text": SHORT, "long_text": LONG,
           "crossing": [token_label(v) for v in crossing_tokens(tok)]}
    for key, stop in (("default", False), ("stop", True)):
        rows = {r.label: r for r in enumerate_paths(model, tok, PROMPT, grammar, stop_at_accept=stop).rows}
        out[key] = {which: ({"paths": rows[text].paths, "conditional": rows[text].conditional,
                             "masked": rows[text].masked} if text in rows else
                            {"paths": 0, "conditional": 0.0, "masked": 0.0})
                    for which, text in (("short", SHORT), ("long", LONG))}
    # «… veces su probabilidad condicionada», and «mucho mayor» than the five names' largest ratio
    out["stop"]["long_ratio"] = out["stop"]["long"]["masked"] / out["stop"]["long"]["conditional"]
    # where the mask chooses between stopping and jumping (why.crossing_forks): the fork that
    # carries most of q~(LONG), how many forks share its text, and what the model gives there
    forks = crossing_forks(model, tok, PROMPT, SHORT, LONG)
    top = forks[0]
    n = len(SHORT.encode())
    cross = [(t, p) for t, p in top["tokens"] if len(top["written"] + t) > n]
    end = [(t, p) for t, p in top["tokens"] if top["written"] + t == SHORT.encode()]
    out["fork"] = {"written": top["written"].decode(), "path": [token_label(t) for t in top["path"]],
                   "paths": sum(f["written"] == top["written"] for f in forks), "forks": len(forks),
                   "reach": top["reach"], "p_cross": top["p_cross"], "p_end": top["p_end"],
                   "q_cross": top["q_cross"], "share": top["reach"] * top["q_cross"] / out["stop"]["long"]["masked"],
                   "same_text": all(f["written"] == top["written"] for f in forks),
                   "cross_token": token_label(max(cross, key=lambda c: c[1])[0]),
                   "end_token": token_label(max(end, key=lambda c: c[1])[0]),
                   "crossing_count": len(cross), "ending_count": len(end)}
    # what the conditional counts and the mask does not: writing the rest of LONG after the
    # crossing token (every token split of it, why.token_splits, scored in one pass each)
    cross_id = tok.vocab.index(max(cross, key=lambda c: c[1])[0])
    context = tok.encode(PROMPT) + [tok.vocab.index(t) for t in top["path"]] + [cross_id]
    rest = LONG.encode()[len(top["written"] + tok.vocab[cross_id]):]
    m64 = model.astype(np.float64)
    out["fork"]["p_rest"] = sum(math.exp(sum(path_steps(m64, context, path)))
                                for path in token_splits(rest, tok.vocab))
    out["fork"]["rest"] = rest.decode()
    return out


def free_text(model, tok) -> dict:
    """A masked sample of a JSON string with no length limit (FREE_TEXT, seed 0, FREE_TEXT_TOKENS
    tokens, or fewer if the context is shorter): at each position inside the string, the probability the unmasked model gives to the
    allowed tokens that close the quote; their mean p means about 1 / p tokens before the string
    closes (a geometric law)."""
    room = model.config.n_ctx - len(tok.encode(PROMPT))
    gen = generate(model, tok, PROMPT, compile_regex(FREE_TEXT), seed=0,
                   max_tokens=min(FREE_TEXT_TOKENS, room))
    closing, written = [], b""
    for pos in gen.positions:
        if written.startswith(b'{"nombre":"') and b'"' not in written[len(b'{"nombre":"'):]:
            closing.append(sum(p for t, p, _ in pos.allowed if b'"' in tok.vocab[t]))
        written += tok.vocab[pos.chosen]
    mean = float(np.mean(closing))
    return {"pattern": FREE_TEXT, "tokens": len(gen.token_ids), "status": gen.status,
            "positions": len(closing), "mean_close": mean, "context": model.config.n_ctx, "max_close": float(max(closing)),
            "expected_tokens": 1 / mean, "start": gen.text[:40]}


def after_initial(model, tok, gen, name: str, top: int = 4, word_tokens: int = 6) -> dict:
    """Why the mask inflates ``name``: at the sample's first real choice, after ``name``'s initial,
    the unmasked model's most probable next tokens, each followed greedily to the end of its word
    (at most ``word_tokens`` tokens, up to the first character that is not a lowercase letter), and
    the probability ``p_name`` of the tokens that go on writing ``name``; ``above`` and ``below``:
    the other words of that list whose first token is more likely than ``p_name``, and the rest."""
    m = model.astype(np.float64)
    first = next(j for j, pos in enumerate(gen.positions) if not pos.is_forced)
    initial = tok.vocab.index(name[0].encode())
    ids = tok.encode(PROMPT) + gen.token_ids[:first] + [initial]
    p = softmax(m.forward(np.array([ids]))[0, -1])
    rest = (name[1:] + '"}').encode()
    p_name = float(sum(p[v] for v, piece in enumerate(tok.vocab) if piece and rest.startswith(piece)))
    words = []
    for v in np.argsort(-p, kind="stable")[:top].tolist():
        word, seq = name[0].encode() + tok.vocab[v], ids + [v]
        for _ in range(word_tokens - 1):
            nxt = int(np.argmax(m.forward(np.array([seq]))[0, -1]))
            text = tok.vocab[nxt].decode("utf-8", "replace")
            letters = text[:len(text) - len(text.lstrip("abcdefghijklmnopqrstuvwxyzáéíóúüñ"))]
            word, seq = word + letters.encode(), seq + [nxt]
            if not letters or letters != text:
                break
        words.append({"label": token_label(tok.vocab[v]), "p": float(p[v]),
                      "word": word.decode("utf-8", "replace")})
    others = [w for w in words if w["word"] != name]
    return {"name": name, "initial": name[0], "next": words, "p_name": p_name,
            "above": [w for w in others if w["p"] > p_name], "below": [w for w in others if w["p"] <= p_name]}


def any_grammar(model, tok) -> dict:
    """The regex and the schema of the last live cell: the texts, the age as written and as
    read by json.loads, and, when the age starts with a minus sign, the masked probability q~ of
    that sign at its position (this compiler lets "-0" through: it is valid JSON worth 0) and, when
    the sign is a token of its own, ``after_minus``: the next token's label, its probability p
    before the mask and q~ after it, and how many tokens the mask allowed there;
    ``minus_conditional``: the conditional's probability of the sign at that position (the
    object's every possible ending after the same tokens, enumerated exactly)."""
    sentence = generate(model, tok, PROMPT, compile_regex(ANY_PATTERN), seed=0)
    obj = generate(model, tok, PROMPT, compile_json_schema(ANY_SCHEMA), seed=0)
    age_text = re.search(r'"edad":(-?[0-9]+)', obj.text).group(1)
    minus_q = after_minus = minus_conditional = None
    written = b""
    for k, pos in enumerate(obj.positions):
        piece = tok.vocab[pos.chosen]
        if written.endswith(b'"edad":') and piece.startswith(b"-"):
            minus_q = pos.q_chosen
            # what the conditional gives the sign there: every way the object can end after this
            # prefix (each allowed integer, or -0, then the brace), enumerated exactly
            prefix = written.decode()
            ends = [f"{prefix}{v}}}" for v in ["-0"] + [str(a) for a in range(ANY_SCHEMA["properties"]["edad"]["minimum"],
                                                                              ANY_SCHEMA["properties"]["edad"]["maximum"] + 1)]]
            rows = enumerate_paths(model, tok, PROMPT, compile_choice(ends), answer_prefix=obj.token_ids[:k]).rows
            minus_conditional = sum(r.conditional for r in rows if r.text[len(written):].startswith(b"-"))
            if piece == b"-" and k + 1 < len(obj.positions):  # the digit after a lone sign
                nxt = obj.positions[k + 1]
                after_minus = {"label": token_label(tok.vocab[nxt.chosen]), "p": nxt.p_chosen,
                               "q": nxt.q_chosen, "allowed": len(nxt.allowed)}
        written += piece
    return {"sentence": sentence.text, "object": obj.text, "age_text": age_text,
            "age": json.loads(obj.text)["edad"], "minus_q": minus_q, "after_minus": after_minus,
            "minus_conditional": minus_conditional,
            "choices": sum(not p.is_forced for p in obj.positions), "tokens": len(obj.positions)}


def model_alone(model, tok) -> dict:
    """What the model does after the prompt without a mask: top tokens, where ``{`` ranks, and
    ``floor``: the tokens whose p is at most FLOOR_FACTOR times the smallest (their count, the
    range of their p, and whether ``{`` and ``"`` are among them)."""
    m = model.astype(np.float64)
    logits = m.forward(np.array([tok.encode(PROMPT)]))[0, -1]
    p = np.exp(logits - logits.max())
    p /= p.sum()
    order = np.argsort(-p, kind="stable")
    rank = {int(t): r for r, t in enumerate(order, start=1)}
    brace, quote = tok.vocab.index(b"{"), tok.vocab.index(b'"')
    # the floor of the distribution: the tokens within FLOOR_FACTOR of the least probable one,
    # among which the brace's rank means nothing
    floor = p <= FLOOR_FACTOR * p.min()
    return {"top": [{"token": int(t), "label": token_label(tok.vocab[t]), "p": float(p[t])} for t in order[:6]],
            "floor": {"count": int(floor.sum()), "low": float(p.min()), "high": float(p[floor].max()),
                      "factor": FLOOR_FACTOR, "brace_in": bool(floor[brace]), "quote_in": bool(floor[quote])},
            "brace": {"p": float(p[brace]), "rank": rank[brace]},
            "quote": {"p": float(p[quote]), "rank": rank[quote]}, "vocab_size": len(tok.vocab)}


def sample_summary(gen, tok) -> dict:
    """One masked sample: text, name, its token split and BPE's (labels and counts), path probabilities."""
    bpe = tok.encode(gen.text)
    return {"seed": gen.seed, "text": gen.text, "name": name_of(gen.text),
            "tokens": len(gen.token_ids), "bpe_tokens": len(bpe),
            "split": [token_label(tok.vocab[t]) for t in gen.token_ids],
            "bpe_split": [token_label(tok.vocab[t]) for t in bpe], "bpe_differs": gen.token_ids != bpe,
            "forced": sum(p.is_forced for p in gen.positions),
            "log_p": gen.log_p, "q": math.exp(gen.log_q)}


def walk_summary(gen, tok, model, grammar) -> dict:
    """The walkthrough: forced positions, then the first position with a real choice and, for each
    allowed initial v there, the exact chance p(G | x, y_<j, v) that the unmasked model goes on to
    finish a text of G (all token paths summed), and the conditional p(v | x, y_<j, G) it implies.

    The conditional depends on how the forced prefix was split into tokens; ``split_share`` is the
    share of this sample's split in p(prefix | x), all ``splits`` token splits of the prefix summed.
    ``noncanonical``: None when the sample's split of the prefix is BPE's; otherwise the first
    position (1-based) where it leaves BPE's, with the unmasked model's most probable token there
    (``top``, ``top_p``, whether the grammar allows it) and the allowed tokens with their p, most
    probable first (``chosen`` marks the sample's). ``split_why``: None with BPE's split; otherwise
    :func:`lesson.mascara.why.split_factors` of the sample's split against BPE's (token labels as
    text).
    """
    first = next(j for j, pos in enumerate(gen.positions) if not pos.is_forced)
    pos = gen.positions[first]
    prefix = b"".join(tok.vocab[t] for t in gen.token_ids[:first])
    allowed = []
    for t, p, q in pos.allowed:
        finish = enumerate_paths(model, tok, PROMPT, grammar, answer_prefix=gen.token_ids[:first] + [t])
        allowed.append({"label": token_label(tok.vocab[t]), "q": q, "p": p,
                        "finish": finish.p_grammar, "name": name_of(finish.rows[0].label)})
    total = sum(a["p"] * a["finish"] for a in allowed)
    top_q = max(allowed, key=lambda a: a["q"])
    for a in allowed:
        a["conditional"] = a["p"] * a["finish"] / total
    all_splits = enumerate_paths(model, tok, PROMPT, compile_choice([prefix.decode("utf-8")]))
    log_p_split = sum(math.log(p.p_chosen) for p in gen.positions[:first])
    split = gen.token_ids[:first]
    bpe = tok.encode(prefix.decode("utf-8"))
    j = next((k for k, (a, b) in enumerate(zip(split, bpe)) if a != b), None)
    noncanonical = None
    if j is not None:  # where the sample's split leaves BPE's: what the unmasked model wanted there
        here = gen.positions[j]
        top, top_p = here.top[0]
        noncanonical = {"position": j + 1, "top": token_label(tok.vocab[top]), "top_p": top_p,
                        "top_allowed": any(t == top for t, _, _ in here.allowed),
                        "allowed": [{"label": token_label(tok.vocab[t]), "p": p, "chosen": t == here.chosen}
                                    for t, p, _ in sorted(here.allowed, key=lambda a: -a[1])]}
    split_why = None
    if j is not None:  # the sample's split against BPE's, factor by factor (why.split_factors)
        split_why = split_factors(model, tok, tok.encode(PROMPT), split, bpe)
        for r in split_why["rows"]:
            r["sample"] = [token_label(b) for b in r["sample"]]
            r["other"] = [token_label(b) for b in r["other"]]
            r["before_sample"], r["before_other"] = token_label(r["before_sample"]), token_label(r["before_other"])
    return {"noncanonical": noncanonical, "split_why": split_why, "seed": gen.seed, "text": gen.text, "forced_before": first, "choice_position": first + 1,
            "written": prefix.decode("utf-8", "replace"),
            "split": [token_label(tok.vocab[t]) for t in gen.token_ids[:first]],
            "bpe_split": [token_label(tok.vocab[t]) for t in tok.encode(prefix.decode("utf-8"))],
            "splits": all_splits.paths, "split_share": math.exp(log_p_split - all_splits.log_p_grammar),
            "kept_mass": pos.kept_mass, "kept_first": gen.positions[0].kept_mass,
            "allowed": allowed, "chosen": token_label(tok.vocab[pos.chosen]), "top_q": top_q["name"],
            "kept": [p.kept_mass for p in gen.positions]}


def utf8_example(tok) -> dict:
    """The allowed set in the middle of a two-byte letter: after ``{"nombre":"Do`` for the text
    with "Doña Paca", one allowed token is the whole letter and another only its first byte."""
    matcher = compile_choice([answer(UTF8_NAME)]).matcher(tok.vocab)
    matcher.consume_bytes(UTF8_PREFIX)
    allowed = allowed_ids(matcher).tolist()
    lead = [t for t in allowed if len(tok.vocab[t]) == 1][0]
    matcher.consume(lead)
    after_lead = allowed_ids(matcher).tolist()
    return {"name": UTF8_NAME, "prefix": UTF8_PREFIX,
            "allowed": [{"token": t, "label": token_label(tok.vocab[t]), "bytes": tok.vocab[t].hex(" "),
                         "partial": is_partial(tok.vocab[t])} for t in allowed],
            "lead": {"token": lead, "label": token_label(tok.vocab[lead])},
            "after_lead": [{"token": t, "label": token_label(tok.vocab[t])} for t in after_lead]}


def enumeration_summary(model, tok, grammar) -> dict:
    """p(G | x), the table, the rejection-sampling cost, and the path counts of G, of its spaced form
    and of the same texts with OTHER_KEY (paths and model positions), with how many token splits
    each key has."""
    result = enumerate_paths(model, tok, PROMPT, grammar)
    spaced = compile_choice([answer(n, spaced=True) for n in NAMES])
    other = compile_choice([answer(n, key=OTHER_KEY) for n in NAMES])
    rows = [{"text": r.label, "name": name_of(r.label), "paths": r.paths,
             "conditional": r.conditional, "masked": r.masked, "ratio": r.masked / r.conditional}
            for r in result.rows]
    by_masked = sorted(rows, key=lambda r: -r["masked"])
    return {"p_grammar": result.p_grammar, "log_p_grammar": result.log_p_grammar, "rows": rows,
            "paths": result.paths, "paths_spaced": sum(count_paths(spaced, tok.vocab).values()),
            "forward_rows": result.forward_rows, "expected_tries": result.expected_tries,
            "years": result.years_at_one_ns, "top_conditional": rows[0], "top_masked": by_masked[0],
            "most_inflated": max(rows, key=lambda r: r["ratio"]),
            "protagonist": next(r for r in rows if r["name"] == PROTAGONIST),
            "reversed": [r["name"] for r in rows] == [r["name"] for r in by_masked][::-1],
            "masked_rank": {r["name"]: i for i, r in enumerate(by_masked, start=1)},
            "other_key": {"key": OTHER_KEY, "paths": sum(count_paths(other, tok.vocab).values()),
                          "positions": count_positions(other, tok.vocab),
                          "key_splits": key_splits(OTHER_KEY, tok)},
            "key_splits": key_splits(KEY, tok)}


def key_splits(key: str, tok) -> int:
    """How many token splits the vocabulary has for ``key`` (token paths of the text alone)."""
    return count_paths(compile_choice([key]), tok.vocab)[key.encode()]


def temperature_sweep(model, tok, grammar) -> list[dict]:
    """The exact table at a few temperatures, with the total variation distance between the
    conditional and the masked distributions (half the sum of absolute differences)."""
    out = []
    for t in SWEEP_TEMPERATURES:
        result = enumerate_paths(model, tok, PROMPT, grammar, temperature=t)
        by_masked = max(result.rows, key=lambda r: r.masked)
        out.append({"temperature": t, "p_grammar": result.p_grammar,
                    "tv": 0.5 * sum(abs(r.conditional - r.masked) for r in result.rows),
                    "top_conditional": name_of(result.rows[0].label),
                    "top_conditional_p": result.rows[0].conditional,
                    "top_masked": name_of(by_masked.label), "top_masked_q": by_masked.masked})
    return out


def rejection_summary(model, tok) -> dict:
    """The reachable grammar: its exact table, and one seeded run of the rejection sampler."""
    grammar = compile_choice(REACHABLE)
    exact = enumerate_paths(model, tok, PROMPT, grammar)
    out = {"texts": REACHABLE, "p_grammar": exact.p_grammar, "expected_tries": exact.expected_tries,
           "rows": [{"text": r.label, "conditional": r.conditional, "masked": r.masked} for r in exact.rows],
           "accepted": REJECTION_ACCEPTED, "tries": None}
    if exact.expected_tries * REJECTION_ACCEPTED > 10_000:  # not this model: the page says so
        return out
    run = rejection_sample(model, tok, PROMPT, grammar, accepted=REJECTION_ACCEPTED, seed=0)
    out.update(tries=len(run.tries), mean_tries=run.mean_tries, passes=run.passes,
               passes_full=run.passes_full)
    out.update(rejection_evidence(out["rows"], run.counts(), REJECTION_ACCEPTED, exact.expected_tries))
    return out


def rejection_evidence(rows: list[dict], counts: dict[bytes, int], n: int, tries_per_answer: float) -> dict:
    """What ``n`` accepted answers can tell between the conditional and the mask.

    rows: the exact table (``text``, ``conditional``, ``masked``); counts: accepted answers per
    text (bytes). Returns the observed and expected counts per text under each distribution
    (``rows`` gain ``observed``, ``expected_conditional``, ``expected_masked``), the standard
    deviation of the most likely text's count under each (binomial), the log likelihood ratio of
    the observed counts, conditional against mask (nats; its exponential, ``odds``), the
    Kullback–Leibler divergence KL(conditional || mask) (the mean log ratio one answer adds when
    the answers follow the conditional; ``kl_reverse``, KL(mask || conditional)), and ``needed``: how many answers make the mean log ratio
    reach ln EVIDENCE_ODDS, with ``needed_tries`` = needed × 1 / p(G | x); ``times_cell`` =
    needed / n, how many times the cell's answers those are, which is also needed_tries over
    ``cell_tries`` = n × 1 / p(G | x), the cell's expected tries (like for like: the tries a seeded
    run happens to take are not its expectation); ``gap_in_sd``: the
    gap between the two expected counts of the most likely text, in standard deviations of its
    count under the mask."""
    out_rows = []
    for r in rows:
        c = counts.get(r["text"].encode(), 0)
        out_rows.append({**r, "observed": c, "expected_conditional": n * r["conditional"],
                         "expected_masked": n * r["masked"]})
    top = max(out_rows, key=lambda r: r["conditional"])
    llr = sum(r["observed"] * math.log(r["conditional"] / r["masked"]) for r in out_rows)
    kl = sum(r["conditional"] * math.log(r["conditional"] / r["masked"]) for r in out_rows)
    kl_reverse = sum(r["masked"] * math.log(r["masked"] / r["conditional"]) for r in out_rows)
    needed = math.ceil(math.log(EVIDENCE_ODDS) / kl)
    sd_masked = math.sqrt(n * top["masked"] * (1 - top["masked"]))
    return {"rows": out_rows, "top": top["text"], "odds_target": EVIDENCE_ODDS,
            "gap_in_sd": abs(n * top["conditional"] - n * top["masked"]) / sd_masked,
            "sd_conditional": math.sqrt(n * top["conditional"] * (1 - top["conditional"])),
            "sd_masked": sd_masked,
            "log_ratio": llr, "odds": math.exp(llr), "kl": kl, "kl_reverse": kl_reverse, "needed": needed,
            "needed_tries": needed * tries_per_answer, "cell_tries": n * tries_per_answer,
            "times_cell": needed / n}


def toy_example() -> dict:
    """A two-path toy for the quiz, small enough to compute by hand.

    G = {"ac", "bd"} over single-letter tokens. First position: p(a) = 0.5, p(b) = 0.2 (the other
    0.3 leaves G). Second: p(c | a) = 0.1, p(d | b) = 0.9.
    """
    p_a, p_b, p_c, p_d = 0.5, 0.2, 0.1, 0.9
    path_ac, path_bd = p_a * p_c, p_b * p_d
    p_grammar = path_ac + path_bd
    kept = p_a + p_b
    return {"p_a": p_a, "p_b": p_b, "p_c": p_c, "p_d": p_d, "kept_first": kept,
            "p_ac": path_ac, "p_bd": path_bd, "p_grammar": p_grammar,
            "conditional_ac": path_ac / p_grammar, "conditional_bd": path_bd / p_grammar,
            "masked_ac": p_a / kept, "masked_bd": p_b / kept}
