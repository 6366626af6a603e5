"""Exact enumeration of every token path that spells a text of a finite grammar G.

G is any masker grammar with a finite language (``compile_choice``, a regular expression without
unbounded repetition, an ``enum`` schema, a non-recursive GBNF grammar...). For the prompt x, every
token sequence y whose bytes are a text g of G is visited once: a depth-first walk over token paths
driven by the masker's matcher (``mask``, ``fork``, ``consume``, the end rule of
:func:`lesson.token_language.ended`). The paths that reach the same depth from one batch go through the
model together, in batches of at most ``batch_rows`` rows, with a key/value cache whose prompt part
is shared by every row; rows whose matchers share a state share one mask. Along each path it multiplies

- p(y | x) = prod_j p(y_j | x, y_<j), the unmasked probability, and
- q~(y | x) = prod_j p(y_j | x, y_<j) / p(A_j | x, y_<j), the masked probability,

then sums per text:

- p(G | x) = sum over all paths of p(y | x): the chance that the unmasked model writes a text of G;
- conditional p(g | x, G) = p(g | x) / p(G | x) (what rejection sampling draws);
- masked q~(g | x) (what the mask draws);
- the number of token paths per text, and 1 / p(G | x), the expected number of rejection-sampling tries.

Sums of tiny probabilities are done with log-sum-exp in float64, with the model in float64.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from masker import Grammar
from minigpt.gpt import log_softmax

from .token_language import (DEFAULT_MAX_PATHS, DEFAULT_MAX_POSITIONS, LanguageCounts, allowed_ids,
                       count_language, ended)
from .numbers import SECONDS_PER_YEAR
from .views import enumeration_html


@dataclass
class TextResult:
    """Per text g of G. log_p: ln p(g | x) (all its token paths summed); conditional: p(g | x, G);
    masked: q~(g | x); paths: how many token sequences spell it."""
    text: bytes
    paths: int
    log_p: float
    conditional: float
    masked: float

    @property
    def label(self) -> str:
        return self.text.decode("utf-8", errors="replace")


@dataclass
class Enumeration:
    """Result of :func:`enumerate_paths`; rows sorted by conditional probability, largest first.

    log_p_grammar: ln p(G | x). forward_rows: rows run through the model (one per non-final path
    prefix); forward_calls: batched forward passes; seconds: wall-clock time of the walk.
    """
    rows: list[TextResult]
    log_p_grammar: float
    forward_rows: int
    forward_calls: int
    seconds: float
    temperature: float = 1.0
    counts: LanguageCounts | None = None

    @property
    def p_grammar(self) -> float:
        """p(G | x) (0.0 if it underflows a float64; log_p_grammar is always exact)."""
        return math.exp(self.log_p_grammar)

    @property
    def paths(self) -> int:
        return sum(r.paths for r in self.rows)

    @property
    def expected_tries(self) -> float:
        """1 / p(G | x): mean number of whole unmasked answers until one is in G (geometric law);
        math.inf past the float64 range (the views format it from ``log_p_grammar``)."""
        return math.exp(-self.log_p_grammar) if -self.log_p_grammar < 709 else math.inf

    @property
    def years_at_one_ns(self) -> float:
        """expected_tries at one nanosecond per try, in years (365.25 days)."""
        return self.expected_tries * 1e-9 / SECONDS_PER_YEAR

    def row(self, text) -> TextResult:
        """The row of ``text`` (str or bytes); KeyError if it is not in G."""
        key = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        for r in self.rows:
            if r.text == key:
                return r
        raise KeyError(text)

    def _repr_html_(self) -> str:
        return enumeration_html(self)


@dataclass
class _Node:
    matcher: object  # a masker Matcher at this path's prefix
    log_p: float
    log_q: float


def enumerate_paths(model, tok, prompt: str, grammar: Grammar, *, temperature: float = 1.0,
                    answer_prefix=(), stop_at_accept: bool = False, batch_rows: int = 256,
                    max_paths: int = DEFAULT_MAX_PATHS, max_positions: int = DEFAULT_MAX_POSITIONS,
                    dtype=np.float64) -> Enumeration:
    """Visit every token path after ``prompt`` that spells a text of ``grammar``; see the module doc.

    grammar: any masker Grammar whose language is finite. Before any model call the language is
    counted (:func:`lesson.token_language.count_language`): an infinite language, or one with more than
    ``max_paths`` token paths or ``max_positions`` model positions, raises LanguageTooLarge, whose
    message names the limit and the count. The counts are in ``result.counts``.
    answer_prefix: token ids already written after the prompt (y_<j); the result is then
    conditioned on them: p_grammar is p(G | x, y_<j), and only texts that start with their bytes
    get a row. stop_at_accept: the end rule of :func:`lesson.sampling.generate`. batch_rows caps the
    rows of one forward pass (memory: about 12 kB per row and position in float64). Raises
    ValueError for temperature <= 0, an answer_prefix that leaves the grammar or ends the text,
    or when a path would not fit in the context.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, found {temperature}")
    start = time.perf_counter()
    matcher = _after_prefix(grammar.matcher(tok.vocab), answer_prefix, tok.vocab, stop_at_accept)
    prompt_ids = tok.encode(prompt) + list(answer_prefix)
    room = model.config.n_ctx - len(prompt_ids)
    counts = count_language(grammar, tok.vocab, stop_at_accept=stop_at_accept, max_paths=max_paths,
                            max_positions=max_positions, max_tokens=max(room, 1), start=matcher)
    if counts.longest_tokens > room:
        raise ValueError(f"prompt ({len(prompt_ids)} tokens) plus the longest path "
                         f"({counts.longest_tokens} tokens) do not fit in the context of "
                         f"{model.config.n_ctx} tokens")
    m = model.astype(dtype)
    root = m.new_cache(1)
    logits = m.step(np.array([prompt_ids]), root)[:, -1]  # (1, V)
    found: dict[bytes, list[tuple[float, float]]] = {}
    # The stack holds batches still to run: (parent batch's cache or None for the prompt, the
    # parent row of each path, its new token, its node). A batch's cache is made only when it runs,
    # so memory holds the caches along one branch of the walk, not a whole depth.
    first = [_Node(matcher, 0.0, 0.0)]
    stack = _batches(None, _expand(first, logits / temperature, found, stop_at_accept), batch_rows)
    rows = calls = 0
    while stack:
        parent, chunk = stack.pop()
        # Room grows 4 positions at a time: whole-row gathers are fast, unused room costs memory.
        cache = (root.branch(len(chunk), capacity=4) if parent is None
                 else parent.select([row for row, _, _ in chunk], extra=1, spare=3))
        logits = m.step(np.array([[token] for _, token, _ in chunk]), cache)[:, 0]  # (n, V)
        nodes = [node for _, _, node in chunk]
        stack += _batches(cache, _expand(nodes, logits / temperature, found, stop_at_accept), batch_rows)
        rows, calls = rows + len(chunk), calls + 1
    return _summarise(found, counts, rows, calls, time.perf_counter() - start, temperature)


def _after_prefix(matcher, answer_prefix, vocab: list[bytes], stop_at_accept: bool):
    """``matcher`` (changed in place and returned) after the tokens ``answer_prefix``; ValueError
    when they leave the grammar or already end the text."""
    for t in answer_prefix:
        if not matcher.mask()[t] or ended(matcher, stop_at_accept):
            raise ValueError(f"answer_prefix spells {matcher.prefix_bytes + vocab[t]!r}, which "
                             "is not a proper prefix of a text of the grammar")
        matcher.consume(t)
    if ended(matcher, stop_at_accept):
        raise ValueError(f"answer_prefix spells {matcher.prefix_bytes!r}, which already ends the text")
    return matcher


def _batches(cache, children: list, size: int) -> list:
    """Children (parent row, token, node) cut into batches of at most ``size`` rows."""
    return [(cache, children[lo:lo + size]) for lo in range(0, len(children), size)]


def _expand(nodes: list[_Node], logits: np.ndarray, found: dict, stop_at_accept: bool) -> list:
    """Extend every node by each allowed token; finished paths go to ``found`` (text -> list of
    (ln p, ln q~)), the rest are returned as (parent row, token id, child node) and still need a
    forward pass. Rows whose matchers share a state key share their allowed set and children."""
    logp = log_softmax(logits)  # (n, V)
    groups: dict = {}
    for row, node in enumerate(nodes):
        groups.setdefault(node.matcher.state_key(), []).append(row)
    children = []
    for rows in groups.values():
        allowed = allowed_ids(nodes[rows[0]].matcher)
        lp = logp[np.ix_(rows, allowed)]  # (rows, allowed)
        log_kept = np.logaddexp.reduce(lp, axis=1)  # ln p(A_j | x, y_<j) per row
        for row, lps, kept in zip(rows, lp.tolist(), log_kept.tolist()):
            node = nodes[row]
            for token, lpv in zip(allowed.tolist(), lps):
                child = node.matcher.fork()
                child.consume(token)
                log_p, log_q = node.log_p + lpv, node.log_q + lpv - kept
                if ended(child, stop_at_accept):
                    found.setdefault(child.prefix_bytes, []).append((log_p, log_q))
                else:
                    children.append((row, token, _Node(child, log_p, log_q)))
    return children


def _summarise(found: dict, counts: LanguageCounts, rows: int, calls: int, seconds: float,
               temperature: float) -> Enumeration:
    per_text = {g: float(np.logaddexp.reduce([lp for lp, _ in paths])) for g, paths in found.items()}
    log_total = float(np.logaddexp.reduce(list(per_text.values())))
    results = [TextResult(g, len(paths), per_text[g], math.exp(per_text[g] - log_total),
                          float(sum(math.exp(lq) for _, lq in paths)))
               for g, paths in found.items()]
    results.sort(key=lambda r: (-r.conditional, r.text))
    return Enumeration(results, log_total, rows, calls, seconds, temperature, counts)


def exact_table(exact) -> dict[bytes, float]:
    """text (bytes) -> conditional probability, from an Enumeration or a dict (str keys encoded)."""
    if hasattr(exact, "rows"):
        return {r.text: r.conditional for r in exact.rows}
    return {(k.encode("utf-8") if isinstance(k, str) else bytes(k)): float(v) for k, v in exact.items()}
