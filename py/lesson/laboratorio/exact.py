"""The exact p(y | x, G) of the «Laboratorio»'s branches, when the grammar G has few enough texts.

For a finite G, :func:`lesson.enumeration.enumerate_paths` visits every token path that spells a
text of G after the prompt x, and sums, per text g (all its token splits together):

- p(g | x, G) = p(g | x) / p(G | x), the model's own probability of g among the texts of G (what
  rejection sampling draws), and
- q̃(g | x), the probability that the masked loop writes g (mask and renormalise at each position).

Their ratio says which branch the mask inflates (q̃ > p(g | x, G)) and which it deflates: the
distortion «La máscara» derives. Both are for the temperature of the experiment, without top-k or
top-p (which change what the loop draws, not the model's conditional).

The enumeration runs once per grammar, prompt, temperature and end rule (a small cache), and only
when the language is finite and has at most :data:`MAX_PATHS` token paths and :data:`MAX_POSITIONS`
model positions (about 2 s of model work in a browser); otherwise :attr:`Exact.reason` says why,
in the current language.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from ..enumeration import Enumeration, TextResult, enumerate_paths
from ..token_language import LanguageTooLarge, allowed_ids
from ..i18n import _
from ..numbers import fmt_int, fmt_sci

MAX_PATHS = 20_000
MAX_POSITIONS = 2_000
MAX_TEXTS = 10_000  # the most texts :func:`grammar_texts` lists before it gives up
_CACHE: dict[str, "Exact"] = {}
_CACHE_SIZE = 8


@dataclass
class Exact:
    """One experiment's enumeration, or why there is none.

    enumeration: the :class:`~lesson.enumeration.Enumeration` (None when it was not run);
    error: why it was not run (count_language's refusal, or the ValueError of a path longer than
    the context), None when it was run; :attr:`reason` says it in the current language.
    """
    enumeration: Enumeration | None
    error: Exception | None = None
    texts: float | None = None  # how many texts G accepts (:func:`grammar_texts`)

    @property
    def reason(self) -> str:
        """Why the enumeration was not run, in the current language ("" when it was)."""
        if self.enumeration is not None or self.error is None:
            return ""
        if isinstance(self.error, LanguageTooLarge):
            return _reason(self.error)
        return _("algún texto de G no cabe en el contexto después de este prompt")

    def of(self, text: bytes) -> TextResult | None:
        """The row of ``text`` (its p(g | x, G), q̃(g | x) and token splits), or None when there is
        no enumeration or ``text`` is not a text of G."""
        if self.enumeration is None:
            return None
        try:
            return self.enumeration.row(text)
        except KeyError:
            return None


def _reason(error: LanguageTooLarge) -> str:
    """Why a language is not enumerated, in the current language, from count_language's refusal."""
    if error.limit == "finite language":
        return _("G tiene infinitos textos")
    if error.limit == "max_tokens":
        return _("G tiene textos de más tokens de los que caben en el contexto (quizá infinitos)")
    if error.limit == "max_paths" and isinstance(error.count, int):
        count = (fmt_int(error.count) if error.count < 10**7
                 else _("unos {n}").format(n=fmt_sci(float(error.count), 2)))
        return _("G tiene {count} caminos de tokens, más de los {most} que el laboratorio recorre").format(
            count=count, most=fmt_int(MAX_PATHS))
    return _("recorrer G pediría más de {most} posiciones del modelo, las que el laboratorio se "
             "permite").format(most=fmt_int(MAX_POSITIONS))


class _Unbounded(Exception):
    """:func:`grammar_texts` found a loop (``args[0]``: inf) or more texts than it lists (None)."""


def grammar_texts(grammar, vocab: list[bytes], *, most: int = MAX_TEXTS, max_tokens: int = 256) -> float | None:
    """How many texts G accepts: every prefix at which its matcher is accepting, whether or not
    the grammar allows more after it (the end rule decides which of them can end a branch). None
    when there are more than ``most`` or a token path is ``max_tokens`` deep; ``math.inf`` when a
    token path returns to a state it has passed (infinitely many texts). Memoised on ``Matcher.state_key``: the texts after a
    state depend only on the state."""
    memo: dict = {}
    on_path: set = set()

    def after(m, depth: int) -> frozenset:
        key = m.state_key()
        if key in memo:
            return memo[key]
        if key in on_path:
            raise _Unbounded(math.inf)
        if depth >= max_tokens:
            raise _Unbounded(None)
        on_path.add(key)
        found = {b""} if m.is_accepting() else set()
        for t in allowed_ids(m).tolist():
            child = m.fork()
            child.consume(t)
            found.update(vocab[t] + rest for rest in after(child, depth + 1))
            if len(found) > most:
                raise _Unbounded(None)
        on_path.discard(key)
        memo[key] = frozenset(found)
        return memo[key]

    try:
        return len(after(grammar.matcher(vocab), 0))
    except _Unbounded as why:
        return why.args[0]


def exact_for(lab) -> Exact | None:
    """The exact conditional for ``lab``'s experiment (a :class:`~lesson.laboratorio.lab.Lab`):
    None without a grammar; else an :class:`Exact`, from the cache when the same grammar, prompt,
    temperature and end rule were enumerated before. Raises nothing for a language too large:
    :attr:`Exact.reason` says why."""
    grammar = lab.grammar
    if grammar is None:
        return None
    key = json.dumps([grammar.kind, grammar.source, lab.prompt, lab.settings["temperature"],
                      lab.stop_at_accept], sort_keys=True, default=str)
    if key not in _CACHE:
        try:
            found = Exact(enumerate_paths(lab.model, lab.tok, lab.prompt, grammar,
                                          temperature=lab.settings["temperature"],
                                          stop_at_accept=lab.stop_at_accept, max_paths=MAX_PATHS,
                                          max_positions=MAX_POSITIONS))
            found.texts = grammar_texts(grammar, lab.tok.vocab)
        except LanguageTooLarge as error:
            found = Exact(None, error)
        except ValueError as error:  # a path longer than the context holds after this prompt
            found = Exact(None, error)
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = found
    return _CACHE[key]
