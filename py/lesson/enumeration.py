"""Exact enumeration of every token path that spells a text of a finite grammar G.

For the prompt x, every token sequence y whose bytes are a text g of G is visited once (a depth-first
walk over the byte trie of G; the paths that reach the same depth from one batch go through the
model together, in batches of at most ``batch_rows`` rows, with a key/value cache whose prompt part
is shared by every row). Along each path it multiplies

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

from .grammar import FiniteGrammar

SECONDS_PER_YEAR = 365.25 * 24 * 3600  # Julian year


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

    @property
    def p_grammar(self) -> float:
        """p(G | x) (0.0 if it underflows a float64; log_p_grammar is always exact)."""
        return math.exp(self.log_p_grammar)

    @property
    def paths(self) -> int:
        return sum(r.paths for r in self.rows)

    @property
    def expected_tries(self) -> float:
        """1 / p(G | x): mean number of whole unmasked answers until one is in G (geometric law)."""
        return math.exp(-self.log_p_grammar)

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
        from .views import enumeration_html
        return enumeration_html(self)


@dataclass
class _Node:
    prefix: bytes
    log_p: float
    log_q: float


def enumerate_paths(model, tok, prompt: str, grammar: FiniteGrammar, *, temperature: float = 1.0,
                    answer_prefix=(), batch_rows: int = 256, dtype=np.float64) -> Enumeration:
    """Visit every token path after ``prompt`` that spells a text of ``grammar``; see the module doc.

    answer_prefix: token ids already written after the prompt (y_<j); the result is then
    conditioned on them: p_grammar is p(G | x, y_<j), and only texts that start with their bytes
    get a row. batch_rows caps the rows of one forward pass (memory: about 12 kB per row and
    position in float64). Raises ValueError for temperature <= 0, an answer_prefix whose bytes leave
    G or complete a text, or when a path would not fit in the context.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, found {temperature}")
    start = time.perf_counter()
    m = model.astype(dtype)
    written = b"".join(grammar.vocab[t] for t in answer_prefix)
    if not grammar.is_prefix(written) or grammar.is_complete(written):
        raise ValueError(f"answer_prefix spells {written!r}, which is not a proper prefix of a text of G")
    prompt_ids = tok.encode(prompt) + list(answer_prefix)
    longest = max(len(g) for g in grammar.texts) + 1
    if len(prompt_ids) + longest > model.config.n_ctx:
        raise ValueError(f"prompt ({len(prompt_ids)} tokens) plus the longest text ({longest} bytes) "
                         f"may not fit in the context of {model.config.n_ctx} tokens")
    root = m.new_cache(1)
    logits = m.step(np.array([prompt_ids]), root)[:, -1]  # (1, V)
    found: dict[bytes, list[tuple[float, float]]] = {g: [] for g in grammar.texts}
    # The stack holds batches still to run: (parent batch's cache or None for the prompt, the
    # parent row of each path, its new token, its node). A batch's cache is made only when it runs,
    # so memory holds the caches along one branch of the walk, not a whole depth.
    stack = _batches(None, _expand(grammar, [_Node(written, 0.0, 0.0)], logits / temperature, found), batch_rows)
    rows = calls = 0
    while stack:
        parent, chunk = stack.pop()
        # Room grows 4 positions at a time: whole-row gathers are fast, unused room costs memory.
        cache = (root.branch(len(chunk), capacity=4) if parent is None
                 else parent.select([row for row, _, _ in chunk], extra=1, spare=3))
        logits = m.step(np.array([[token] for _, token, _ in chunk]), cache)[:, 0]  # (n, V)
        nodes = [node for _, _, node in chunk]
        stack += _batches(cache, _expand(grammar, nodes, logits / temperature, found), batch_rows)
        rows, calls = rows + len(chunk), calls + 1
    return _summarise(found, rows, calls, time.perf_counter() - start, temperature)


def _batches(cache, children: list, size: int) -> list:
    """Children (parent row, token, node) cut into batches of at most ``size`` rows."""
    return [(cache, children[lo:lo + size]) for lo in range(0, len(children), size)]


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _expand(grammar: FiniteGrammar, nodes: list[_Node], logits: np.ndarray, found: dict) -> list:
    """Extend every node by each allowed token; finished paths go to ``found``, the rest are returned
    as (parent row, token id, child node) and still need a forward pass."""
    logp = _log_softmax(logits)  # (n, V)
    groups: dict[bytes, list[int]] = {}  # rows with the same bytes share their allowed set
    for row, node in enumerate(nodes):
        groups.setdefault(node.prefix, []).append(row)
    children = []
    for prefix, rows in groups.items():
        allowed = grammar.allowed_ids(prefix)
        lp = logp[np.ix_(rows, allowed)]  # (rows, allowed)
        log_kept = np.logaddexp.reduce(lp, axis=1)  # ln p(A_j | x, y_<j) per row
        pieces = [None if t == grammar.end_token else prefix + grammar.vocab[t] for t in allowed]
        done = [grammar.end_token is None and grammar.is_complete(piece) for piece in pieces]
        for row, lps, kept in zip(rows, lp.tolist(), log_kept.tolist()):
            node = nodes[row]
            for token, piece, complete, lpv in zip(allowed, pieces, done, lps):
                log_p, log_q = node.log_p + lpv, node.log_q + lpv - kept
                if piece is None:  # the end token: the text is the prefix itself
                    found[prefix].append((log_p, log_q))
                elif complete:
                    found[piece].append((log_p, log_q))
                else:
                    children.append((row, token, _Node(piece, log_p, log_q)))
    return children


def _summarise(found: dict, rows: int, calls: int, seconds: float, temperature: float) -> Enumeration:
    found = {g: paths for g, paths in found.items() if paths}  # texts the answer prefix excludes
    per_text = {g: float(np.logaddexp.reduce([lp for lp, _ in paths])) for g, paths in found.items()}
    log_total = float(np.logaddexp.reduce(list(per_text.values())))
    results = [TextResult(g, len(paths), per_text[g], math.exp(per_text[g] - log_total),
                          float(sum(math.exp(lq) for _, lq in paths)))
               for g, paths in found.items()]
    results.sort(key=lambda r: (-r.conditional, r.text))
    return Enumeration(results, log_total, rows, calls, seconds, temperature)


def count_paths(grammar: FiniteGrammar) -> dict[bytes, int]:
    """Per text of G, how many token sequences spell it (no model needed).

    ways[i] = number of ways to write text[i:] = sum over tokens v that start text[i:] of
    ways[i + len(v)], with ways[len(text)] = 1 (dynamic programming over byte offsets).
    """
    counts = {}
    for text in grammar.texts:
        ways = [0] * len(text) + [1]
        for i in range(len(text) - 1, -1, -1):
            ways[i] = sum(ways[i + len(piece)] for v, piece in enumerate(grammar.vocab)
                          if v != grammar.end_token and piece and text.startswith(piece, i))
        counts[text] = ways[0]
    return counts


def count_positions(grammar: FiniteGrammar) -> int:
    """How many model positions :func:`enumerate_paths` runs after the prompt (no model needed):
    one per token path prefix that is not yet a finished path.

    below[p] = sum over allowed tokens v after the bytes p (the end token excluded) that do not
    finish a text of (1 + below[p + v]), computed from the longest byte prefix of G down to b"".
    """
    prefixes = sorted({text[:i] for text in grammar.texts for i in range(len(text) + 1)}, key=len, reverse=True)
    below: dict[bytes, int] = {}
    for prefix in prefixes:
        below[prefix] = 0
        for t in grammar.allowed_ids(prefix):
            piece = None if t == grammar.end_token else prefix + grammar.vocab[t]
            if piece is not None and not (grammar.end_token is None and grammar.is_complete(piece)):
                below[prefix] += 1 + below[piece]
    return below[b""]
