"""Undoing the mask's distortion: importance weights and sequential Monte Carlo.

The mask draws a valid answer y with q~(y | x) = p(y | x) / prod_j p(A_j | x, y_<j) (see
:mod:`lesson.enumeration`), while the model conditioned on writing a text of G gives it
p(y | x) / p(G | x). Their ratio, up to the constant p(G | x), is the importance weight

    w(y) = p(y | x) / q~(y | x) = prod_j p(A_j | x, y_<j),

the product of the kept masses along y's own path. Two estimators use it, on one particle loop:

- :func:`importance_sample`: N masked answers, each weighted by w. Self-normalised importance
  sampling (Kahn & Marshall 1953; see Owen, *Monte Carlo theory, methods and examples*, 2013,
  ch. 9): the conditional of a text g is estimated by sum_i w_i [y_i = g] / sum_i w_i, and
  p(G | x) by the mean weight (1/N) sum_i w_i, which is unbiased: E_q~[w] = sum_y p(y | x) = p(G | x).
- :func:`smc`: K particles advance one token at a time under the mask; each weight is multiplied by
  the kept mass of its position (the incremental weight), and when the effective sample size
  (sum w)^2 / sum w^2 of a run's unfinished particles falls below ``ess_threshold`` times their
  number, those particles are resampled with **systematic** resampling (Kitagawa 1996; Douc,
  Cappé & Moulines 2005) and their weights reset to the group's mean weight. The estimate of p(G | x) is the mean of the final weights (with
  every particle resampled at once, this is the product over the stretches between resamplings of
  their mean weights); it is unbiased, with adaptive resampling too (Del Moral 2004; Whiteley, Lee
  & Heine 2016, "On the role of interaction in sequential Monte Carlo algorithms"). Applied to
  language models: Lew et al. 2023, "Sequential Monte Carlo steering of large language models
  using probabilistic programs" (arXiv:2306.03081); Loula et al. 2025, "Syntactic and semantic
  control of large language models via sequential Monte Carlo" (ICLR 2025). Park et al. 2024,
  "Grammar-aligned decoding" (arXiv:2405.21047), measure the mask's distortion on grammars.
  Resampling here touches only the unfinished particles, each copy taking the mean weight of that
  group, so the total weight is kept in expectation; finished particles keep their weights (a
  particle that already paid for its last tokens is not compared with one that has not).

The loop (one model call per position for every particle of every run):

1. every unfinished particle sits at a node, a distinct token prefix; particles with the same
   prefix share one row of the batched key/value cache (``KVCache.select`` with repeated rows
   makes the children's rows), so each row runs the model once however many particles it holds;
2. mask (``Matcher.mask``) and kept mass p_T(A_j | x, y_<j) per node; each particle draws its next
   token from the masked distribution q~ and multiplies its weight by the kept mass;
3. a particle whose text is complete (:func:`lesson.token_language.ended`) stops and keeps its weight;
   one that runs out of ``max_tokens`` has weight 0 (it is not in G);
4. (smc only) resample a run whose ESS fell below the threshold; nodes left without particles are
   dropped before the next model call.

``importance_sample`` is that loop without step 4. Several independent runs (``runs``) go through
the same calls, so a convergence study over seeds costs one pass per position. Computed in float64.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from masker import Grammar
from minigpt.gpt import log_softmax

from .enumeration import exact_table
from .token_language import allowed_ids, ended
from .smc_views import convergence_html, particles_html

DEFAULT_MAX_PARTICLES = 200_000  # particles times runs: memory for the weights and the history


@dataclass
class Step:
    """One position of run 0, for the particle-path picture.

    labels: the bytes each particle had written after this position (K entries); weights: the
    normalised weights W_i after multiplying by this position's kept mass (float64[K], sum 1);
    ess: (sum w)^2 / sum w^2 at that moment; ancestors: None, or, when the run was resampled right
    after this position, int[K]: the particle of this position that new particle i copies.
    """
    labels: list[bytes]
    weights: np.ndarray
    ess: float
    ancestors: np.ndarray | None = None


@dataclass
class Particles:
    """Result of :func:`importance_sample` (method "is") or :func:`smc` (method "smc").

    texts[r][i]: the bytes of particle i of run r (None when it ran out of tokens);
    log_weights: float64[runs, K], ln of each final weight since the run's last resampling
    (for "is", ln w(y_i) = ln prod_j p(A_j | x, y_<j), the whole product);
    log_z: float64[runs], ln of the run's estimate of p(G | x);
    ess: float64[positions, runs], the effective sample size after each position's weighting
    (before any resampling at that position); resampled[r]: the positions (1-based) after which
    run r was resampled; history: the Steps of run 0.
    Costs: forward_calls (batched model calls, the prompt's included), forward_rows (rows those
    calls computed: one per distinct prefix), particle_steps (tokens drawn by all particles: what a
    loop without shared prefixes would run through the model), seconds (wall clock).
    """
    method: str
    particles: int
    runs: int
    seed: int
    temperature: float
    ess_threshold: float | None
    texts: list[list[bytes | None]]
    log_weights: np.ndarray
    log_z: np.ndarray
    ess: np.ndarray
    resampled: list[list[int]]
    history: list[Step] = field(default_factory=list)
    forward_calls: int = 0
    forward_rows: int = 0
    particle_steps: int = 0
    seconds: float = 0.0

    def _run(self, run: int) -> int:
        """``run`` checked: an int in 0 .. runs - 1, else IndexError naming the range."""
        if not isinstance(run, (int, np.integer)) or not 0 <= run < self.runs:
            raise IndexError(f"run must be 0 .. {self.runs - 1} (there are {self.runs} runs), found {run!r}")
        return int(run)

    def weights(self, run: int = 0) -> np.ndarray:
        """Normalised weights W_i of one run: float64[K], summing to 1. Every method that takes
        ``run`` raises IndexError outside 0 .. runs - 1."""
        lw = self.log_weights[self._run(run)]
        w = np.exp(lw - lw.max())
        return w / w.sum()

    def estimate(self, run: int = 0) -> dict[bytes, float]:
        """The run's estimate of the conditional p(g | x, G): text -> sum of the weights W_i of
        the particles that wrote g (texts with no particle are absent)."""
        out: dict[bytes, float] = {}
        for text, w in zip(self.texts[self._run(run)], self.weights(run).tolist()):
            if text is not None and w > 0:
                out[text] = out.get(text, 0.0) + w
        return out

    def frequencies(self, run: int = 0) -> dict[bytes, float]:
        """Share of the run's particles that wrote each text, ignoring the weights (for "is": the
        mask's own estimate of its distribution q~)."""
        out: dict[bytes, float] = {}
        for text in self.texts[self._run(run)]:
            if text is not None:
                out[text] = out.get(text, 0.0) + 1 / self.particles
        return out

    @property
    def p_grammar(self) -> np.ndarray:
        """Each run's estimate of p(G | x): float64[runs] (0.0 where it underflows; see log_z)."""
        return np.exp(self.log_z)

    def final_ess(self, run: int = 0) -> float:
        """(sum w)^2 / sum w^2 of the final weights of one run (1 .. K)."""
        w = self.weights(run)
        return float(1.0 / np.sum(w * w))

    def tv(self, exact, run: int = 0, weighted: bool = True) -> float:
        """Total variation distance between the run's estimate (or, with weighted=False, its
        unweighted frequencies) and ``exact``: an :class:`lesson.Enumeration` or a dict
        text (bytes) -> probability. Half the sum of absolute differences, 0 .. 1."""
        est = self.estimate(run) if weighted else self.frequencies(run)
        return total_variation(est, exact_table(exact))

    def _repr_html_(self) -> str:
        return particles_html(self)


def total_variation(a: dict, b: dict) -> float:
    """(1/2) sum_g |a(g) - b(g)| over the union of the keys (a missing key counts as 0)."""
    return 0.5 * sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))


def importance_sample(model, tok, prompt: str, grammar: Grammar, n: int, *, runs: int = 1,
                      seed: int = 0, temperature: float = 1.0,
                      max_tokens: int | None = None) -> Particles:
    """``n`` masked answers per run, each with its importance weight w = prod_j p_T(A_j | x, y_<j).

    Self-normalised importance sampling with the mask as proposal (see the module doc). ``runs``
    independent runs of n answers each share the model calls; seed seeds one NumPy
    ``default_rng``. Returns :class:`Particles` with method "is". Raises ValueError for n < 1,
    runs < 1, temperature <= 0, a prompt without tokens or without room for max_tokens, a grammar
    whose empty text is already complete, or when every answer of a run ran out of tokens.
    """
    return _run(model, tok, prompt, grammar, n, runs, seed, temperature, None, max_tokens)


def smc(model, tok, prompt: str, grammar: Grammar, particles: int, *, ess_threshold: float = 0.5,
        runs: int = 1, seed: int = 0, temperature: float = 1.0,
        max_tokens: int | None = None) -> Particles:
    """Sequential Monte Carlo with the mask as proposal and systematic resampling (module doc).

    particles: K per run. ess_threshold: after a position where the effective sample size
    (sum w)^2 / sum w^2 of a run's M unfinished particles is below ``ess_threshold * M``, those M
    are resampled (systematic) and each gets their mean weight; finished particles keep theirs.
    0 never resamples (that is importance sampling), 1 resamples whenever the weights differ. Other arguments and
    errors as :func:`importance_sample`, plus ValueError for a threshold outside [0, 1].
    Returns :class:`Particles` with method "smc".
    """
    if not 0 <= ess_threshold <= 1:
        raise ValueError(f"ess_threshold must be in [0, 1] (a fraction of the particles), found {ess_threshold}")
    return _run(model, tok, prompt, grammar, particles, runs, seed, temperature, ess_threshold, max_tokens)


def _check(tok, model, prompt: str, k: int, runs: int, temperature: float, max_tokens):
    if k < 1:
        raise ValueError(f"the number of particles must be at least 1, found {k}")
    if runs < 1:
        raise ValueError(f"runs must be at least 1, found {runs}")
    if k * runs > DEFAULT_MAX_PARTICLES:
        raise ValueError(f"{k} particles times {runs} runs is more than {DEFAULT_MAX_PARTICLES}")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, found {temperature}")
    prompt_ids = tok.encode(prompt)
    if not prompt_ids:
        raise ValueError("the prompt must hold at least one token")
    room = model.config.n_ctx - len(prompt_ids)
    max_tokens = room if max_tokens is None else max_tokens
    if not 0 < max_tokens <= room:
        raise ValueError(f"max_tokens must be in 1..{room} (the room left in the context after the "
                         f"prompt's {len(prompt_ids)} tokens), found {max_tokens}")
    return prompt_ids, max_tokens


def _logmeanexp(x: np.ndarray) -> float:
    top = x.max()
    if top == -np.inf:
        return -math.inf
    return float(top + np.log(np.mean(np.exp(x - top))))


def _ess(log_w: np.ndarray) -> float:
    top = log_w.max()
    if top == -np.inf:
        return 0.0
    w = np.exp(log_w - top)
    return float(w.sum() ** 2 / np.sum(w * w))


def systematic_resample(weights: np.ndarray, u: float) -> np.ndarray:
    """Systematic resampling: K ancestors for normalised weights float64[K], given one uniform u in
    [0, 1). Particle i is copied floor(K W_i) or ceil(K W_i) times (expected K W_i). Returns int[K],
    ascending."""
    k = len(weights)
    cumulative = np.cumsum(weights)
    points = (u + np.arange(k)) / k * cumulative[-1]
    return np.minimum(np.searchsorted(cumulative, points, side="right"), k - 1)


def _extend(matchers, nodes, tokens, vocab_size: int):
    """Step 3: one candidate node per distinct (node, token) among the live particles' ``nodes``
    and drawn ``tokens`` (int arrays): ``(which, parent, chosen, candidates)``, ``which[i]`` the
    candidate of particle i, ``parent`` / ``chosen`` each candidate's node and token, and
    ``candidates`` their matchers (the parent's forked, the token consumed)."""
    unique, which = np.unique(nodes * vocab_size + tokens, return_inverse=True)
    parent, chosen = np.divmod(unique, vocab_size)
    candidates = []
    for a, t in zip(parent.tolist(), chosen.tolist()):
        child = matchers[a].fork()
        child.consume(t)
        candidates.append(child)
    return which.reshape(-1), parent, chosen, candidates


def _resample(r: int, k: int, node, done, log_w, threshold: float, rng):
    """Step 4 for run ``r`` (particles r*k .. r*k+k-1): when the unfinished ones' effective sample
    size is below ``threshold`` times their number, draw their ancestors by systematic resampling
    (one uniform of ``rng``) and give them all the mean weight, in place in ``node`` and ``log_w``.
    Returns the ancestor of each of the run's k particles (int[k]; a finished one is its own), or
    None when the run did not resample."""
    idx = np.arange(r * k, (r + 1) * k)
    group = idx[~done[idx]]
    if len(group) < 2 or not _ess(log_w[group]) < threshold * len(group):
        return None
    mean = _logmeanexp(log_w[group])
    w = np.exp(log_w[group] - log_w[group].max())
    ancestors = systematic_resample(w / w.sum(), float(rng.random()))
    node[group] = node[group[ancestors]]
    log_w[group] = mean
    full = np.arange(r * k, (r + 1) * k)
    full[group - r * k] = group[ancestors]
    return full - r * k


def _run_ess(log_w, k: int, runs: int, max_tokens: int) -> np.ndarray:
    """The effective sample size of each run's k weights (float64[runs]); ValueError when a run has
    none left (every particle ran out of tokens)."""
    ess = np.array([_ess(log_w[r * k:(r + 1) * k]) for r in range(runs)])
    if (ess == 0).any():
        r = int(np.flatnonzero(ess == 0)[0])
        raise ValueError(f"every particle of run {r} ran out of tokens ({max_tokens}) before "
                         "completing a text of the grammar")
    return ess


def _run(model, tok, prompt, grammar, k, runs, seed, temperature, threshold, max_tokens) -> Particles:
    start = time.perf_counter()
    prompt_ids, max_tokens = _check(tok, model, prompt, k, runs, temperature, max_tokens)
    root = grammar.matcher(tok.vocab)
    if ended(root):
        raise ValueError("the grammar's empty text is already complete: there is nothing to sample")
    m = model.astype(np.float64)
    rng = np.random.default_rng(seed)
    total, vocab_size = k * runs, len(tok.vocab)
    node = np.zeros(total, dtype=np.intp)  # each unfinished particle's node (a row of the batch)
    done = np.zeros(total, dtype=bool)
    texts: list[bytes | None] = [None] * total
    log_w = np.zeros(total)
    resampled: list[list[int]] = [[] for _ in range(runs)]
    ess_rows, history = [], []
    shared = m.new_cache(1)
    logits = m.step(np.array([prompt_ids]), shared)[:, -1]  # float64[nodes, V]
    matchers, cache = [root], None
    calls, rows, steps = 1, 0, 0
    for position in range(1, max_tokens + 1):
        live = np.flatnonzero(~done)
        steps += len(live)
        token, log_kept = _draw(logits / temperature, matchers, node, live, rng)  # step 2
        log_w[live] += log_kept
        # 3. one candidate node per distinct (node, token); a complete text stops its particles
        which, parent, chosen, candidates = _extend(matchers, node[live], token, vocab_size)
        complete = np.array([ended(c) for c in candidates])
        stops = complete[which]
        for p, c in zip(live[stops].tolist(), which[stops].tolist()):
            texts[p] = candidates[c].prefix_bytes
        done[live[stops]] = True
        node[live] = which
        if position == max_tokens:  # out of tokens: not a text of G, so weight 0
            out = live[~stops]
            done[out] = True
            log_w[out] = -np.inf
        ess_rows.append(_run_ess(log_w, k, runs, max_tokens))
        labels = [texts[i] if done[i] else candidates[node[i]].prefix_bytes for i in range(k)]
        w0 = np.exp(log_w[:k] - log_w[:k].max())
        history.append(Step(labels, w0 / w0.sum(), float(ess_rows[-1][0])))
        # 4. resampling of the unfinished particles, run by run (finished ones keep their weights)
        for r in range(runs) if threshold is not None else ():
            ancestors = _resample(r, k, node, done, log_w, threshold, rng)
            if ancestors is not None:
                resampled[r].append(position)
                if r == 0:
                    history[-1].ancestors = ancestors
        if done.all():
            break
        # 5. one model call for the candidates that still hold an unfinished particle
        alive = np.unique(node[~done])
        renumber = np.full(len(candidates), -1, dtype=np.intp)
        renumber[alive] = np.arange(len(alive))
        node[~done] = renumber[node[~done]]
        cache = (shared.branch(len(alive), capacity=4) if cache is None
                 else cache.select(parent[alive], extra=1, spare=3))
        logits = m.step(chosen[alive][:, None], cache)[:, 0]
        matchers = [candidates[c] for c in alive.tolist()]
        calls, rows = calls + 1, rows + len(alive)
    log_z = np.array([_logmeanexp(log_w[r * k:(r + 1) * k]) for r in range(runs)])
    return Particles("is" if threshold is None else "smc", k, runs, seed, temperature, threshold,
                     [texts[r * k:(r + 1) * k] for r in range(runs)], log_w.reshape(runs, k).copy(),
                     log_z, np.array(ess_rows), resampled, history, calls, rows, steps,
                     time.perf_counter() - start)


def _draw(logits: np.ndarray, matchers: list, node: np.ndarray, live: np.ndarray, rng):
    """Step 2 of the loop: for each live particle, a token drawn from the masked distribution of its
    node, and ln of that node's kept mass. logits: float64[nodes, V] (already divided by T).
    Returns (int[len(live)], float64[len(live)]), in the order of ``live``."""
    logp = log_softmax(logits)
    order = np.argsort(node[live], kind="stable")
    bounds = np.searchsorted(node[live][order], np.arange(len(matchers) + 1))
    u = rng.random(len(live))
    token = np.empty(len(live), dtype=np.intp)
    log_kept = np.empty(len(live))
    for i, matcher in enumerate(matchers):
        members = order[bounds[i]:bounds[i + 1]]
        if not len(members):
            continue
        allowed = allowed_ids(matcher)
        lp = logp[i, allowed]
        kept = float(np.logaddexp.reduce(lp))
        if kept == -np.inf:
            raise ValueError(f"the model gives probability 0 to every allowed token after "
                             f"{matcher.prefix_bytes[-40:]!r}")
        cumulative = np.cumsum(np.exp(lp - kept))
        pick = np.searchsorted(cumulative, u[members] * cumulative[-1], side="right")
        token[members] = allowed[np.minimum(pick, len(allowed) - 1)]
        log_kept[members] = kept
    return token, log_kept


@dataclass
class ConvergenceRow:
    """One (method, N) of :func:`convergence`: method "mask" (the masked draws' own frequencies),
    "is" or "smc"; tvs: the total variation from the exact conditional, one per run (float64[runs]);
    particle_steps: tokens drawn per run; forward_rows and forward_calls: of the whole call."""
    method: str
    n: int
    tvs: np.ndarray
    particle_steps: float
    forward_rows: int
    forward_calls: int

    @property
    def mean(self) -> float:
        """Mean total variation over the runs."""
        return float(np.mean(self.tvs))


@dataclass
class Convergence:
    """Result of :func:`convergence`: rows in the order (N, method); exact_tv is the total
    variation between the mask's exact distribution q~ and the conditional (what "mask" tends to)."""
    rows: list[ConvergenceRow]
    runs: int
    ess_threshold: float
    exact_tv: float
    seconds: float

    def row(self, method: str, n: int) -> ConvergenceRow:
        """The row of ``method`` ("mask", "is" or "smc") at size ``n``; KeyError if absent."""
        for r in self.rows:
            if r.method == method and r.n == n:
                return r
        raise KeyError((method, n))

    def _repr_html_(self) -> str:
        return convergence_html(self)


def convergence(model, tok, prompt: str, grammar: Grammar, exact, *, sizes=(10, 100, 1000),
                runs: int = 20, seed: int = 0, ess_threshold: float = 0.5,
                temperature: float = 1.0) -> Convergence:
    """Total variation from the exact conditional (``exact``: an Enumeration of the same prompt,
    grammar and temperature) of three estimates, for each N in ``sizes``, over ``runs``
    independent runs: the masked draws' frequencies ("mask"), importance sampling with N draws
    ("is", the same draws weighted) and SMC with N particles ("smc"). Seeds: ``seed + N`` for
    the draws of size N, ``seed + N + 1`` for SMC. Errors as :func:`smc`, and ValueError when
    ``sizes`` is empty."""
    sizes = list(sizes)
    if not sizes:
        raise ValueError("sizes is empty: give at least one number of samples, e.g. sizes=[10, 100, 1000]")
    start = time.perf_counter()
    table = exact_table(exact)
    rows = []
    for n in sizes:
        draws = importance_sample(model, tok, prompt, grammar, n, runs=runs, seed=seed + n,
                                  temperature=temperature)
        particles = smc(model, tok, prompt, grammar, n, runs=runs, seed=seed + n + 1,
                        ess_threshold=ess_threshold, temperature=temperature)
        for method, result, weighted in (("mask", draws, False), ("is", draws, True),
                                         ("smc", particles, True)):
            tvs = np.array([total_variation(result.estimate(r) if weighted else result.frequencies(r), table)
                            for r in range(runs)])
            rows.append(ConvergenceRow(method, n, tvs, result.particle_steps / runs,
                                       result.forward_rows, result.forward_calls))
    exact_tv = 0.5 * sum(abs(r.conditional - r.masked) for r in exact.rows)
    return Convergence(rows, runs, ess_threshold, exact_tv, time.perf_counter() - start)
