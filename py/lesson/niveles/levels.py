"""Levels of guarantee, measured on the mini-GPT: the lesson «Niveles de garantía».

Five ways to get a structured answer out of a model, from asking in the prompt (level 0) to a
context-free grammar (level 4), each measured on the same question with :func:`measure_level`
(many answers at once with :func:`lesson.batch.sample_batch`) and gathered in a
:class:`LevelsTable`. The retry arithmetic of level 1 (:func:`retry_arithmetic`,
:class:`RetryTable`) compares the failure rate after k independent tries of questions with
different success rates p_i, mean_i (1 - p_i)^k, with the naive (1 - mean_i p_i)^k.

Counting model calls: :func:`lesson.batch.sample_batch` runs the model once per position for the
whole batch, but the unit reported here is per answer: ``positions`` is the number of tokens the
model produced for the answers (one model position each), whatever the batching.
"""

from __future__ import annotations

import functools
import heapq
import json
import math
import time
from dataclasses import dataclass, field
from html import escape

import numpy as np

from masker import compile_cfg, compile_json_schema, compile_regex
from minigpt.gpt import softmax

from ..batch import sample_batch
from ..course import NAMES, PROMPT, answer  # noqa: F401  (answer: re-exported for the cells)
from ..early_abort import sample_until_invalid
from ..i18n import _, ngettext
from ..numbers import fmt_decimal, fmt_int, fmt_percent, fmt_sci
from ..views import _scroll, styled
from .pictures import retry_figure

# The schema the question intends: one key, one of five names (JSON Schema 2020-12).
SCHEMA = {"type": "object", "properties": {"nombre": {"enum": NAMES}},
          "required": ["nombre"], "additionalProperties": False}
# A few-shot prompt: two questions answered in JSON before the lesson's question.
FEW_SHOT_PROMPT = ('¿Quién es la protagonista de Tristana? Responde en JSON.\n{"nombre":"Tristana"}\n'
                   '¿Quién es la protagonista de La de Bringas? Responde en JSON.\n{"nombre":"Rosalía"}\n'
                   + PROMPT)
# "JSON mode": any JSON object, as GBNF. Strings of at most 12 characters, integers of at most
# 6 digits and at most 3 members per object or array, so that every answer ends (without
# bounds the model adds members and characters until the token budget runs out).
JSON_MODE_GBNF = r'''
root    ::= objeto
objeto  ::= "{" ( par ( "," par ){0,2} )? "}"
par     ::= cadena ":" valor
valor   ::= cadena | numero | "true" | "false" | "null" | objeto | lista
lista   ::= "[" ( valor ( "," valor ){0,2} )? "]"
cadena  ::= "\"" [^"\\\x00-\x1f]{0,12} "\""
numero  ::= "-"? ( "0" | [1-9] [0-9]{0,5} )
'''
# The same objects without the bounds: a JSON object of any size (for the budget figure).
JSON_MODE_UNBOUNDED_GBNF = r'''
root    ::= objeto
objeto  ::= "{" ( par ( "," par )* )? "}"
par     ::= cadena ":" valor
valor   ::= cadena | numero | "true" | "false" | "null" | objeto | lista
lista   ::= "[" ( valor ( "," valor )* )? "]"
cadena  ::= "\"" [^"\\\x00-\x1f]* "\""
numero  ::= "-"? ( "0" | [1-9] [0-9]* )
'''
# Every text that json.loads reads (RFC 8259 with Python's NaN, Infinity and -Infinity, whitespace
# around the value): level 0 stops an answer as soon as no continuation of it is in this language.
JSON_TEXT_GBNF = r'''
root   ::= ws valor ws
valor  ::= objeto | lista | cadena | numero | "true" | "false" | "null" | "NaN" | "Infinity" | "-Infinity"
objeto ::= "{" ws ( par ( ws "," ws par )* ws )? "}"
par    ::= cadena ws ":" ws valor
lista  ::= "[" ws ( valor ( ws "," ws valor )* ws )? "]"
cadena ::= "\"" ( [^"\\\x00-\x1f] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\""
numero ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
ws     ::= [ \t\n\r]*
'''
# Level 4: the schema's object plus a note in nested parentheses, balanced. A JSON Schema
# "pattern" is a regular expression and cannot ask for balance at any depth.
PARENS_GBNF = r'''
root    ::= "{\"nombre\":\"" nombre "\",\"nota\":\"" grupo "\"}"
nombre  ::= "Benina" | "Almudena" | "Frasquito" | "Obdulia" | "Juliana"
grupo   ::= "(" pieza ( " " pieza ){0,2} ")"
pieza   ::= palabra | grupo
palabra ::= [a-záéíóúñ]{1,12}
'''
WORD_LETTERS = set("abcdefghijklmnopqrstuvwxyzáéíóúñ")
# Level 1: questions whose answers a program checks (the answer must start with one of the texts).
RETRY_QUESTIONS = [
    ("¿Quién llama?\n", ["-"]),
    ("¿Vienes o no?\n", ["-Sí", "-No", "Sí", "No"]),
    ("Dime un nombre.\n", ["Benina ", "Rosalía ", "Tristana ", "Almudena ", "Obdulia ",
                           "Frasquito ", "Juliana "]),
    ("¿Quién es la protagonista?\n", ["La ", "El ", "Benina "]),
    (PROMPT, ["{"]),
]
RETRY_TRIES = 5


# ---------------------------------------------------------------- checks (plain Python)

def parses(text: str) -> bool:
    """True when ``json.loads`` reads the whole ``text``."""
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def matches_schema(text: str) -> bool:
    """True when ``text`` is JSON for SCHEMA: an object whose only key is "nombre", one of NAMES.
    (Written out by hand; the tests compare it with the ``jsonschema`` library.)"""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and list(value) == ["nombre"] and value["nombre"] in NAMES


def balanced_group(text: str) -> bool:
    """True when ``text`` is one group of PARENS_GBNF: ``(`` 1 to 3 pieces separated by single
    spaces ``)``, a piece being a word of 1 to 12 lowercase letters or a group. A recursive-descent
    check, written apart from the grammar (which the tests compare it with)."""
    def group(i: int) -> int:  # index after the group starting at i, or -1
        if i >= len(text) or text[i] != "(":
            return -1
        i, pieces = i + 1, 0
        while True:
            if i < len(text) and text[i] == "(":
                i = group(i)
                if i < 0:
                    return -1
            else:
                start = i
                while i < len(text) and text[i] in WORD_LETTERS:
                    i += 1
                if not 1 <= i - start <= 12:
                    return -1
            pieces += 1
            if i < len(text) and text[i] == " " and pieces < 3:
                i += 1
                continue
            return i + 1 if i < len(text) and text[i] == ")" else -1
    return group(0) == len(text)


def matches_parens(text: str) -> bool:
    """True when ``text`` is a compact JSON object {"nombre": one of NAMES, "nota": a balanced
    group} (the language of PARENS_GBNF; compact: no spaces outside the strings)."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return (isinstance(value, dict) and list(value) == ["nombre", "nota"] and value["nombre"] in NAMES
            and isinstance(value["nota"], str) and balanced_group(value["nota"])
            and text == json.dumps(value, ensure_ascii=False, separators=(",", ":")))


# ---------------------------------------------------------------- measurements

@dataclass
class LevelResult:
    """One level measured on ``n`` answers.

    parsed / matched: answers that ``json.loads`` reads / that meet the level's format (``check``).
    positions: model positions spent on the answers (tokens generated, retries included).
    seconds: wall time of the measurement (s; noisy, never asserted).
    model_rows / model_calls: the model's rows (one per distinct prefix at each position, the
    prompt's included; :func:`lesson.batch.sample_batch`'s ``stats``) and its calls (one per
    position of the longest answer); model_seconds / mask_seconds: the part of
    ``seconds`` spent in the model / in the masker (s; noisy).
    texts: the answers (for level 1, the first try that parsed, else the last try).
    """
    level: int
    name: str
    n: int
    parsed: int
    matched: int
    positions: int
    seconds: float
    texts: list[str] = field(default_factory=list, repr=False)
    check: str = "esquema"
    token_counts: list[int] = field(default_factory=list, repr=False)  # tokens of each answer
    budget_hits: int = 0  # answers stopped by the token budget (level 0), still viable
    token_ids: list[list[int]] = field(default_factory=list, repr=False)  # each answer's tokens (masked levels)
    model_rows: int = 0
    model_calls: int = 0
    model_seconds: float = 0.0
    mask_seconds: float = 0.0

    @property
    def parse_rate(self) -> float:
        return self.parsed / self.n if self.n else 0.0

    @property
    def schema_rate(self) -> float:
        return self.matched / self.n if self.n else 0.0

    @property
    def calls_per_valid(self) -> float:
        """Model positions per answer that meets the format; inf when none does."""
        return self.positions / self.matched if self.matched else math.inf

    @property
    def seconds_per_valid(self) -> float:
        return self.seconds / self.matched if self.matched else math.inf

    def _repr_html_(self) -> str:
        return LevelsTable([self])._repr_html_()


def measure_level(model, tok, level: int, name: str, prompt: str, grammar=None, *, n: int = 200,
                  seed: int = 0, max_tokens: int | None = None, stop_at_accept: bool = False,
                  check=matches_schema, check_name: str = "esquema") -> LevelResult:
    """``n`` answers to ``prompt`` (masked by ``grammar`` if given) with one
    :func:`lesson.batch.sample_batch`, each checked with :func:`parses` and ``check``.
    Raises what ``sample_batch`` raises (ValueError for n < 1, a prompt too long...)."""
    stats = {}
    start = time.perf_counter()
    gens = sample_batch(model, tok, prompt, grammar, n=n, seed=seed, max_tokens=max_tokens,
                        stop_at_accept=stop_at_accept, stats=stats)
    seconds = time.perf_counter() - start
    texts = [g.text for g in gens]
    counts = [len(g.token_ids) for g in gens]
    return LevelResult(level, name, n, sum(map(parses, texts)), sum(map(check, texts)),
                       sum(counts), seconds, texts, check_name, counts,
                       token_ids=[list(g.token_ids) for g in gens], model_rows=stats["model_rows"],
                       model_calls=stats["model_calls"],
                       model_seconds=stats["model_seconds"], mask_seconds=stats["mask_seconds"])


@functools.cache
def json_text_grammar():
    """:data:`JSON_TEXT_GBNF` compiled (``compile_cfg``), once per process."""
    return compile_cfg(JSON_TEXT_GBNF)


def fewest_tokens(text: str | bytes, vocab: list[bytes]) -> int:
    """The fewest tokens of ``vocab`` (bytes per token id) whose bytes spell ``text`` (UTF-8 for a
    str): a shortest path over byte offsets, O(len(text) * len(vocab)). Raises ValueError when no
    split exists (a byte no token starts with)."""
    data = text.encode() if isinstance(text, str) else bytes(text)
    best = [0] + [math.inf] * len(data)  # best[i]: fewest tokens that spell data[:i]
    for i in range(len(data)):
        if best[i] == math.inf:
            continue
        for piece in vocab:
            if piece and data.startswith(piece, i) and best[i] + 1 < best[i + len(piece)]:
                best[i + len(piece)] = best[i] + 1
    if best[-1] == math.inf:
        raise ValueError(f"no split of {data!r} into tokens of the vocabulary")
    return int(best[-1])


def measure_prompt(model, tok, prompt: str, *, n: int = 200, seed: int = 0, max_tokens: int = 12,
                   level: int = 0, name: str | None = None) -> LevelResult:
    """Level 0: ``n`` unmasked answers to ``prompt`` (temperature 1), each stopped at
    ``max_tokens`` tokens or as soon as it can no longer be read by ``json.loads``
    (:func:`lesson.sample_until_invalid` watching :data:`JSON_TEXT_GBNF`: the harness checks, it
    does not mask), then read with ``json.loads`` and checked with :func:`matches_schema`.
    ``positions`` counts the tokens actually generated, ``token_counts`` each answer's and
    ``budget_hits`` the answers that ``max_tokens`` stopped while they could still become JSON. Raises what ``sample_until_invalid``
    raises (ValueError for n < 1, max_tokens < 1, a prompt without room). ``name`` defaults to
    «pedirlo en el prompt» in the current language."""
    if name is None:
        name = _("pedirlo en el prompt")
    start = time.perf_counter()
    run = sample_until_invalid(model, tok, prompt, json_text_grammar(), n=n, seed=seed,
                               max_tokens=max_tokens)
    seconds = time.perf_counter() - start
    texts = [t.decode("utf-8", errors="replace") for t in run.texts]
    return LevelResult(level, name, n, sum(map(parses, texts)), sum(map(matches_schema, texts)),
                       sum(run.tokens), seconds, texts, token_counts=list(run.tokens),
                       budget_hits=sum(s == "budget" for s in run.status))


def with_retries(tries: LevelResult, k: int = RETRY_TRIES, level: int = 1,
                 name: str | None = None) -> LevelResult:
    """Level 1 from level 0's answers: consecutive groups of ``k`` tries make one answer, which
    succeeds at its first try that meets the format (the later tries are not spent).
    Positions and seconds count the tries spent, pro rata (tries are independent draws).
    ``name`` defaults to «validar y reintentar» in the current language."""
    if name is None:
        name = _("validar y reintentar")
    if k < 1:
        raise ValueError(f"k must be at least 1, found {k}")
    answers = tries.n // k
    if answers < 1:
        raise ValueError(f"{tries.n} tries make no group of {k}")
    per_try_positions = tries.positions / tries.n
    per_try_seconds = tries.seconds / tries.n
    parsed = matched = spent = 0
    texts = []
    for a in range(answers):
        group = tries.texts[a * k:(a + 1) * k]
        good = [i for i, t in enumerate(group) if matches_schema(t)]
        used = good[0] + 1 if good else k
        spent += used
        chosen = group[used - 1]
        texts.append(chosen)
        parsed += any(parses(t) for t in group[:used])
        matched += bool(good)
    return LevelResult(level, name, answers, parsed, matched, round(spent * per_try_positions),
                       spent * per_try_seconds, texts)


def p_first_byte(model, tok, prompt: str, byte: bytes = b"{") -> float:
    """Exact probability that the unmasked model's answer to ``prompt`` starts with ``byte``: the
    mass of the tokens whose bytes start with it, at the first position (float64)."""
    ids = tok.encode(prompt)
    model = model.astype(np.float64)
    p = softmax(model.step(np.array([ids]), model.new_cache(1))[0, -1])
    return float(sum(p[t] for t, piece in enumerate(tok.vocab) if piece.startswith(byte)))


WHITESPACE = b" \t\n\r"  # what json.loads skips around a value (RFC 8259's ws)


def brace_bound(model, tok, prompt: str, *, rel_tol: float = 0.05, max_calls: int = 40) -> dict:
    """An upper bound on the probability that the unmasked answer to ``prompt`` starts with ``{``
    after any whitespace (ws* "{"): what every answer that ``json.loads`` reads as an object must
    do, so it bounds the probability of a valid answer of any spacing.

    Best-first walk over the answers that so far wrote only whitespace tokens (tokens whose bytes
    are all in :data:`WHITESPACE`), most probable first, one model call each (float64): each call
    adds its prefix's mass times the mass of the tokens whose bytes, leading whitespace stripped,
    start with ``{``, and pushes the whitespace children. The prefixes left unexpanded are counted
    whole, so ``found + unexpanded`` is an upper bound; the walk stops when ``unexpanded`` is below
    ``rel_tol`` times ``found`` or after ``max_calls`` calls. Returns {"found", "unexpanded",
    "bound", "calls"} (probabilities, floats). Raises ValueError for an empty prompt."""
    ids = tok.encode(prompt)
    if not ids:
        raise ValueError("the prompt has no tokens")
    model = model.astype(np.float64)
    blank = [t for t, b in enumerate(tok.vocab) if b and all(c in WHITESPACE for c in b)]
    brace = [t for t, b in enumerate(tok.vocab) if b.lstrip(WHITESPACE).startswith(b"{")]
    frontier, found, calls = [(-1.0, ())], 0.0, 0
    while frontier and calls < max_calls and -sum(m for m, _ in frontier) > rel_tol * found:
        neg, seq = heapq.heappop(frontier)
        p = softmax(model.step(np.array([ids + list(seq)]), model.new_cache(1))[0, -1])
        calls += 1
        found += -neg * float(p[brace].sum())
        for t in blank:
            heapq.heappush(frontier, (neg * float(p[t]), seq + (t,)))
    unexpanded = -sum(m for m, _ in frontier)
    return {"found": found, "unexpanded": unexpanded, "bound": found + unexpanded, "calls": calls}


def inside_braces(texts: list[str]) -> dict:
    """What JSON mode's answers hold (each text a JSON object): ``empty`` (answers that are
    ``{}``), ``n_values`` (values of the top-level keys, all answers), ``kinds`` (values per Python
    type name: int, str, NoneType...), ``examples`` (the first four non-empty answers) and
    ``with_nombre`` (answers with the key "nombre"). Raises ValueError for a text that does not parse."""
    values = [json.loads(t) for t in texts]
    kinds: dict[str, int] = {}
    for v in values:
        for item in v.values():
            kinds[type(item).__name__] = kinds.get(type(item).__name__, 0) + 1
    return {"empty": sum(1 for v in values if v == {}), "n_values": sum(len(v) for v in values),
            "kinds": kinds, "examples": [t for t in texts if t != "{}"][:4],
            "with_nombre": sum(1 for v in values if "nombre" in v)}


def paren_depth(note: str) -> int:
    """The deepest nesting of parentheses in ``note``: 0 without any, 1 for ``(a b)``, 2 for
    ``((a) b)``. Counts ``(`` up and ``)`` down; it does not check balance (:func:`balanced_group`
    does)."""
    depth = deepest = 0
    for ch in note:
        if ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth -= 1
    return deepest


def depth_counts(texts: list[str]) -> dict[int, int]:
    """Level 4's answers by the depth of their note: {depth: answers}, every depth from 1 to the
    deepest (0 where none), in order. Raises ValueError / KeyError for a text that is not an
    object with a "nota"."""
    depths = [paren_depth(json.loads(t)["nota"]) for t in texts]
    return {d: depths.count(d) for d in range(1, max(depths, default=0) + 1)}


def first_nested(texts: list[str]) -> tuple[int, str] | None:
    """(index, text) of the first answer whose note nests (depth 2 or more); None if none does."""
    for i, t in enumerate(texts):
        if paren_depth(json.loads(t)["nota"]) >= 2:
            return i, t
    return None


def distinct_states(grammar, answers: list[list[int]], vocab: list[bytes]) -> int:
    """Distinct matcher states (``Matcher.state_key``, the key masks are cached under) met before
    each token of ``answers`` (lists of token ids, each a path of ``grammar``): how many different
    masks a decoder had to compute for them. Raises what ``Matcher.consume`` raises for a token
    the grammar does not allow."""
    keys = set()
    for tokens in answers:
        m = grammar.matcher(vocab)
        for t in tokens:
            keys.add(m.state_key())
            m.consume(int(t))
    return len(keys)


WORD_CLASS = "[a-záéíóúñ]{1,12}"  # PARENS_GBNF's palabra
# Two prefixes of level 4 that admit exactly the same continuations (one word written inside the
# first group, the next piece to come): the Earley items' origins tell them apart anyway.
SAME_FUTURE = ('{"nombre":"Benina","nota":"(por ', '{"nombre":"Benina","nota":"(pora ')


def bounded_parens_regex(depth: int) -> str:
    """PARENS_GBNF's language with groups nested at most ``depth`` (≥ 1) deep, as a regular
    expression for ``compile_regex``: the same words, pieces and names, each group one level of
    the expression. Raises ValueError for a depth below 1."""
    if depth < 1:
        raise ValueError(f"depth must be at least 1, not {depth}")
    piece = WORD_CLASS
    for _ in range(depth):
        group = rf"\({piece}( {piece}){{0,2}}\)"
        piece = f"({WORD_CLASS}|{group})"
    return rf'\{{"nombre":"({"|".join(NAMES)})","nota":"{group}"\}}'


def state_sources(dfa_level: LevelResult, stack_level: LevelResult, vocab: list[bytes]) -> dict:
    """Where level 4's distinct matcher states come from, on the answers both levels wrote
    (``token_ids``; level 4's are PARENS_GBNF paths, level 3's SCHEMA paths):

    - ``dfa3``: level 3's distinct DFA states (its masks);
    - ``earley4``: level 4's distinct Earley keys (``Matcher.state_key``), ``flat_earley`` those of
      the ``flat_answers`` whose note never nests (depth 1) alone, of ``answers``;
    - ``dfa4``: the distinct states a DFA of the same language cut at the answers' deepest nesting
      ``depth`` (``bounded_parens_regex``, minimised by ``compile_regex``) meets on the same tokens:
      the masks level 4 would need with no stack at all;
    - ``same_future``: the two prefixes of ``SAME_FUTURE``: whether their masks are equal, whether
      they share an Earley key, and whether they reach the same state of the bounded DFA (equal
      states of a minimal DFA: the same continuations, up to that depth).

    Raises ValueError when an answer of ``stack_level`` is not in PARENS_GBNF's language."""
    texts = stack_level.texts
    if not all(map(matches_parens, texts)):
        raise ValueError("state_sources needs level 4 answers in the grammar's language")
    depths = [paren_depth(json.loads(t)["nota"]) for t in texts]
    earley, depth = compile_cfg(PARENS_GBNF), max(depths)
    dfa = compile_regex(bounded_parens_regex(depth))
    flat = [ids for ids, d in zip(stack_level.token_ids, depths) if d == 1]
    after = {}
    for name, grammar in (("earley", earley), ("dfa", dfa)):
        matchers = [grammar.matcher(vocab) for _ in SAME_FUTURE]
        for m, prefix in zip(matchers, SAME_FUTURE):
            m.consume_bytes(prefix)
        after[name] = matchers
    return {"answers": len(texts), "flat_answers": len(flat), "depth": depth,
            "dfa3": distinct_states(compile_json_schema(SCHEMA), dfa_level.token_ids, vocab),
            "earley4": distinct_states(earley, stack_level.token_ids, vocab),
            "flat_earley": distinct_states(earley, flat, vocab),
            "dfa4": distinct_states(dfa, stack_level.token_ids, vocab),
            "same_future": {"prefixes": list(SAME_FUTURE),
                            "same_mask": bool(np.array_equal(*(m.mask() for m in after["earley"]))),
                            "same_earley_key": after["earley"][0].state_key() == after["earley"][1].state_key(),
                            "same_dfa_state": after["dfa"][0].state_key() == after["dfa"][1].state_key()}}


def stack_cost(dfa: LevelResult, stack: LevelResult) -> dict:
    """How much more a level with a pushdown grammar cost than one with a DFA, as ratios of
    ``stack`` to ``dfa``: ``positions`` (model positions per valid answer), ``seconds`` (time per
    valid answer) and ``seconds_per_position``. Times are wall clock (noisy). Raises ValueError
    when either level has no valid answer or took no time."""
    if not (dfa.matched and stack.matched and dfa.seconds > 0 and stack.seconds > 0):
        raise ValueError("both levels need valid answers and a measured time")
    return {"positions": stack.calls_per_valid / dfa.calls_per_valid,
            "seconds": stack.seconds_per_valid / dfa.seconds_per_valid,
            "seconds_per_position": (stack.seconds / stack.positions) / (dfa.seconds / dfa.positions)}


NOTE_OPENING, NOTE_CLOSING = ',"nota":"(', ')"}'


def position_split(result: LevelResult, vocab: list[bytes]) -> dict[str, float]:
    """Where a masked level's positions go, per answer on average: each token counted in the
    stretch of the answer where it starts. Stretches: ``{"nombre":"…"`` (up to the name's closing
    quote), then for level 4's answers the fixed ``,"nota":"(`` (NOTE_OPENING, forced by the
    grammar), the note's words (``…``) and ``)"}`` (NOTE_CLOSING); for the others ``}``. Keys are
    those stretches as text, in order. Raises ValueError for a result without answers."""
    if not result.token_ids:
        raise ValueError("the level has no answers to split")
    totals: dict[str, int] = {}
    for ids in result.token_ids:
        text = b"".join(vocab[t] for t in ids)
        name_end = text.index(b'"', len(b'{"nombre":"')) + 1
        if text[name_end:].startswith(NOTE_OPENING.encode()):
            cuts = [(0, '{"nombre":"…"'), (name_end, NOTE_OPENING), (name_end + len(NOTE_OPENING), "…"),
                    (len(text) - len(NOTE_CLOSING), NOTE_CLOSING)]
        else:
            cuts = [(0, '{"nombre":"…"'), (name_end, text[name_end:].decode())]
        start = 0
        for t in ids:
            label = [lab for off, lab in cuts if off <= start][-1]
            totals[label] = totals.get(label, 0) + 1
            start += len(vocab[t])
    return {k: v / len(result.token_ids) for k, v in totals.items()}


def initial_choice(model, tok, names=NAMES, prompt: str = PROMPT) -> "InitialChoice":
    """Level 3's one free choice: after the forced opening ``{"nombre":"`` (the tokenizer's
    split), the names differ from their first letter on, so the mask chooses the name when it
    chooses the initial. Per name: ``q`` (the mask's q~ of the tokens that start with its
    initial there) and ``finish`` (the unmasked model's probability of writing the rest of the
    answer after its one-letter initial, every token path summed: ``enumerate_paths`` with that
    answer prefix). The conditional of a name is proportional to p(initial) × finish; the mask
    gives it about q. Raises ValueError if two names share an initial."""
    from ..enumeration import enumerate_paths
    from masker import compile_choice
    initials = [n[0] for n in names]
    if len(set(initials)) != len(initials):
        raise ValueError("the names must have different initials")
    answers = [answer(n) for n in names]
    grammar = compile_choice(answers)
    opening = tok.encode(answers[0][:answers[0].index(names[0])])  # {"nombre":"
    m = grammar.matcher(tok.vocab)
    for t in opening:
        m.consume(t)
    mask = m.mask()
    p = softmax(model.astype(np.float64).forward(np.array([tok.encode(prompt) + opening]))[0, -1])
    kept = float(p[mask].sum())
    rows = []
    for n in names:
        q = float(sum(p[v] for v in np.flatnonzero(mask) if tok.vocab[v].decode("utf-8", "replace").startswith(n[0]))) / kept
        first = tok.vocab.index(n[0].encode())
        finish = enumerate_paths(model, tok, prompt, grammar, answer_prefix=opening + [first]).p_grammar
        rows.append({"name": n, "q": q, "p_initial": float(p[first]), "finish": finish})
    return InitialChoice(rows)


class InitialChoice:
    """:func:`initial_choice`'s rows as a table (``data-testid="initial-choice"``), most q~ first:
    the name, the mask's q~ of its initial, and the model's probability of finishing the answer
    after it."""

    def __init__(self, rows: list[dict]):
        self.rows = sorted(rows, key=lambda r: -r["q"])

    def _repr_html_(self) -> str:
        body = "".join(f'<tr data-name="{escape(r["name"])}" data-q="{r["q"]!r}" data-finish="{r["finish"]!r}">'
                       f'<th scope="row">{escape(r["name"])}</th><td class="num">{fmt_decimal(r["q"], 3)}</td>'
                       f'<td class="num">{fmt_sci(r["finish"], 2)}</td></tr>' for r in self.rows)
        heads = (_("nombre"), _("q̃ de su inicial"), _("terminar tras la inicial, sin máscara"))
        return styled(_scroll(_("la elección de la inicial")) + '<table class="compact-table" data-testid="initial-choice">'
                      + "<caption>" + _("La elección que decide el nombre: la inicial, tras la apertura partida por el tokenizador") + "</caption><thead><tr>"
                      + "".join(f'<th scope="col">{h}</th>' for h in heads) + "</tr></thead><tbody>" + body
                      + "</tbody></table></div>")


class StackCost:
    """The end of the cell «La tabla de niveles» that compares level 4 with level 3: a line with
    :func:`stack_cost`'s ratios, then a table of where each level's time went (answers, positions,
    model rows, and the seconds in the model, in the masker and in the rest: the sampling loop's
    softmax, draws and bookkeeping). The times are marked ``data-measured``: they change from one
    run to the next, and the page's tests leave them out when they compare a live output with the
    precomputed one."""

    def __init__(self, dfa: LevelResult, stack: LevelResult):
        self.cost = stack_cost(dfa, stack)
        self.levels = (dfa, stack)

    def _repr_html_(self) -> str:
        c = self.cost
        text = _("nivel 4 frente a nivel 3: {positions} veces las posiciones por respuesta válida, "
                 "{seconds} veces el tiempo; por posición, {per_position} veces").format(
            positions=fmt_decimal(c["positions"], 2),
            seconds=f'<span data-measured="">{fmt_decimal(c["seconds"], 1)}</span>',
            per_position=f'<span data-measured="">{fmt_decimal(c["seconds_per_position"], 1)}</span>')

        def secs(x: float) -> str:
            return f'<td class="num"><span data-measured="">{fmt_decimal(x, 2)}</span></td>'
        rows = "".join(
            f'<tr data-level="{r.level}" data-model-rows="{r.model_rows}" data-model-calls="{r.model_calls}">'
            f'<th scope="row">{r.level}</th>'
            f'<td class="num">{fmt_int(r.n)}</td><td class="num">{fmt_int(r.positions)}</td>'
            f'<td class="num">{fmt_int(r.model_calls)}</td><td class="num">{fmt_int(r.model_rows)}</td>'
            + secs(r.model_seconds) + secs(r.mask_seconds)
            + secs(max(r.seconds - r.model_seconds - r.mask_seconds, 0.0)) + secs(r.seconds) + "</tr>"
            for r in self.levels)
        heads = (_("nivel"), _("respuestas"), _("posiciones"), _("llamadas al modelo"), _("filas del modelo"), _("modelo (s)"),
                 _("máscaras (s)"), _("resto del bucle (s)"), _("total (s)"))
        table = (_scroll(_("dónde se fue el tiempo")) + '<table class="levels" data-testid="time-split">'
                 + "<caption>" + _("Dónde se fue el tiempo de los niveles 3 y 4") + "</caption><thead><tr>"
                 + "".join(f"<th scope='col'>{h}</th>" for h in heads)
                 + "</tr></thead><tbody>" + rows + "</tbody></table></div>")
        return styled(f'<p class="stack-cost" data-testid="stack-cost">{text}</p>' + table)


# ---------------------------------------------------------------- level 1: retries

def retry_arithmetic(ps, ks=range(1, 6)) -> list[dict]:
    """For success rates ``ps`` (one per question, in [0, 1]) and tries ``ks``: per k, the
    failure rate of k independent tries averaged over the questions, mean_i (1 - p_i)^k, and
    what a single average rate predicts, (1 - mean_i p_i)^k. Jensen's inequality: the first is
    never below the second. Raises ValueError for an empty ``ps`` or a rate outside [0, 1]."""
    ps = [float(p) for p in ps]
    if not ps:
        raise ValueError("ps must hold at least one success rate")
    for i, p in enumerate(ps):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"ps[{i}] = {p} is not a probability in [0, 1]")
    mean = sum(ps) / len(ps)
    return [{"k": k, "per_question": sum((1 - p) ** k for p in ps) / len(ps),
             "naive": (1 - mean) ** k} for k in ks]


class RetryTable:
    """The retry arithmetic as a picture (:func:`lesson.niveles.pictures.retry_figure`) and two
    tables: the questions with their p_i, then per k both failure rates. ``questions``: list of
    (prompt, valid starts, p_i)."""

    def __init__(self, questions, ks=range(1, 6)):
        self.questions = [(str(q), list(texts), float(p)) for q, texts, p in questions]
        self.rows = retry_arithmetic([p for _, _, p in self.questions], ks)

    def _repr_html_(self) -> str:
        last = self.rows[-1]["k"]
        qs = "".join(
            f'<tr data-p="{p!r}"><td><code>{escape(q.strip())}</code></td>'
            f'<td>{" ".join("<code>" + escape(t.replace(" ", "␣")) + "</code>" for t in texts)}</td>'
            f'<td class="num">{_prob(p)}</td><td class="num">{_prob((1 - p) ** last)}</td></tr>'
            for q, texts, p in self.questions)
        ks = "".join(f'<tr data-k="{r["k"]}" data-per-question="{r["per_question"]!r}" '
                     f'data-naive="{r["naive"]!r}"><td class="num">{r["k"]}</td>'
                     f'<td class="num">{_prob(r["per_question"])}</td>'
                     f'<td class="num">{_prob(r["naive"])}</td></tr>' for r in self.rows)
        return styled(
            retry_figure(self.rows, [q[2] for q in self.questions])
            + _scroll(_("tasas de éxito por pregunta"))
            + '<table class="levels" data-testid="retry-questions">'
            + "<caption>" + _("Tasa de éxito de un intento, por pregunta (exacta, por enumeración)")
            + "</caption><thead><tr><th scope='col'>" + _("pregunta") + "</th><th scope='col'>"
            + _("válida si empieza por") + "</th><th scope='col'>p<sub>i</sub></th><th scope='col'>"
            + ngettext("falla {k} vez seguida", "falla {k} veces seguidas", last).format(k=fmt_int(last))
            + f"</th></tr></thead><tbody>{qs}</tbody></table></div>"
            + _scroll(_("fallos tras k intentos")) + '<table class="levels" data-testid="retry-table">'
            + "<caption>" + _("Probabilidad de fallar k intentos seguidos, media de las preguntas")
            + "</caption><thead><tr><th scope='col'>k</th><th scope='col'>"
            + _("media de (1 − p<sub>i</sub>)<sup>k</sup>") + "</th><th scope='col'>"
            + _("(1 − media de p<sub>i</sub>)<sup>k</sup>") + "</th></tr></thead>"
            f"<tbody>{ks}</tbody></table></div>")


# ---------------------------------------------------------------- the levels table

def _prob(p: float) -> str:
    """A probability for a table cell: 0 and 1 as such, tiny values as powers of ten."""
    if p == 0 or p == 1:
        return fmt_int(int(p))
    if not math.isfinite(p):
        return "—"
    return fmt_decimal(p, 3) if p >= 1e-3 else fmt_sci(p, 2)


def _per_valid(x: float, unit: str = "") -> str:
    """A cost per valid answer (finite: a level without valid answers has no such cost; see
    :func:`_not_measured`)."""
    if x >= 1e6:
        return fmt_sci(x, 2) + unit
    return fmt_decimal(x, 1 if x >= 10 else 3) + unit


def _ms(seconds: float) -> str:
    """A time per valid answer in milliseconds to three significant figures (:func:`fmt_sci`; a
    noisy wall-clock time deserves no more digits): 0.001528 s -> "1,53 ms" ("1.53 ms" in
    English), 0.035 s -> "35,0 ms"."""
    ms = float(f"{seconds * 1000:.3g}")  # round first: 9.9996 is 10,0, not 10,00
    return fmt_sci(ms, 3) + " ms"


def _not_measured(n: int) -> str:
    """The cost cell of a level where none of ``n`` answers was valid: not infinite, unmeasured."""
    return _("sin medir: 0 válidas de {n}").format(n=fmt_int(n))


class LevelsTable:
    """The measured table: one row per level (``tr[data-level]`` with ``data-n``,
    ``data-parse-rate`` and ``data-schema-rate``, decimals in [0, 1]; test hooks). A level with no
    valid answer gets «sin medir» in its cost columns: its cost per valid answer is finite
    (1/p tries) but these samples cannot measure it."""

    def __init__(self, results):
        self.results = list(results)

    def _repr_html_(self) -> str:
        rows = []
        for r in self.results:
            rows.append(
                f'<tr data-level="{r.level}" data-n="{r.n}" data-parse-rate="{r.parse_rate!r}" '
                f'data-schema-rate="{r.schema_rate!r}"><th scope="row">{r.level}</th>'
                f'<td>{escape(r.name)}</td><td class="num">{fmt_int(r.n)}</td>'
                f'<td class="num">{_percent(r.parse_rate)}</td>'
                f'<td class="num">{_percent(r.schema_rate)}</td>'
                + (f'<td class="num">{_per_valid(r.calls_per_valid)}</td>'
                   f'<td class="num">{_ms(r.seconds_per_valid)}</td></tr>' if r.matched else
                   f'<td class="num" colspan="2">{_not_measured(r.n)}</td></tr>'))
        return styled(
            _scroll(_("tabla de niveles")) + '<table class="levels" data-testid="levels-table">'
            + "<caption>" + _("Cada nivel, medido en esta página") + "</caption><thead><tr>"
            + "".join(f"<th scope='col'>{h}</th>" for h in (
                _("nivel"), _("cómo"), _("respuestas"), _("se leen con json.loads"),
                _("cumplen el esquema (nivel 4: la gramática)"), _("posiciones del modelo por respuesta válida"),
                _("tiempo por respuesta válida")))
            + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>")


def _percent(x: float) -> str:
    """A rate as a percentage; exactly 0 and 1 without decimals, so no rate near them reads as them."""
    return fmt_percent(x, 0) if x in (0, 1) else fmt_percent(x, 1)
