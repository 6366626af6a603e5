"""A grammar's language over the token vocabulary (its token paths), before any model call.

Everything here drives a masker ``Matcher`` (``mask``, ``consume``, ``fork``, ``is_accepting``,
``is_finished``, ``state_key``), so it holds for every grammar kind: ``compile_choice``,
``compile_regex``, ``compile_json_schema`` and ``compile_cfg``.

- :func:`count_language`: how many texts, token paths and model positions an exact enumeration
  would visit, and the longest path in tokens. A depth-first walk over token paths, memoised on the
  matcher's state key (matchers with equal keys have the same futures), so a grammar with 10^20
  token paths is counted in the time its automaton states take. A loop through one state means an
  infinite language and is refused at once, as is a count past ``max_paths`` or ``max_positions``.
- :func:`ended`: the end rule of every decode loop of the lesson, stated once.
- :func:`forced_kind`: whether a position offers a real choice, or only one continuation of the text.

A token path ends when the matcher is finished (``is_finished()``: the text is complete and no
token may follow), or, with ``stop_at_accept=True``, as soon as the text is complete
(``is_accepting()``). Both rules look at token boundaries only, like the decode loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from masker.errors import MaskerError

DEFAULT_MAX_PATHS = 100_000
DEFAULT_MAX_POSITIONS = 20_000  # about 20 s of model work in the browser (1 ms per position)


class LanguageTooLarge(MaskerError, ValueError):
    """The language has more token paths or model positions than a limit allows, or is infinite.

    Attributes: ``limit`` (the keyword argument that sets it), ``value`` (its value), ``count``
    (the count found: an int, or None for an infinite language).
    """

    def __init__(self, message: str, limit: str, value: int | None, count: int | None):
        self.limit, self.value, self.count = limit, value, count
        super().__init__(message)


@dataclass
class LanguageCounts:
    """Result of :func:`count_language`.

    paths: token paths from the start to an end; positions: model positions an enumeration runs
    (one per path prefix that has not ended, shared prefixes counted once); longest_tokens: tokens
    of the longest path; texts: per text (bytes), the number of token paths that spell it (empty
    when ``count_language`` was called with ``texts=False``).
    """
    paths: int
    positions: int
    longest_tokens: int
    texts: dict[bytes, int] = field(default_factory=dict)

    @property
    def n_texts(self) -> int:
        return len(self.texts)

    @property
    def longest_bytes(self) -> int:
        """Bytes of the longest text (0 when the texts were not listed)."""
        return max(map(len, self.texts), default=0)


def ended(matcher, stop_at_accept: bool = False) -> bool:
    """The end rule: the text is complete and no token may follow (``is_finished``), or, with
    ``stop_at_accept``, the text is complete (``is_accepting``)."""
    return matcher.is_accepting() if stop_at_accept else matcher.is_finished()


def allowed_ids(matcher) -> np.ndarray:
    """The allowed set of the matcher's prefix: token ids, int64[n], ascending."""
    return np.flatnonzero(matcher.mask())


def count_language(grammar, vocab: list[bytes], *, stop_at_accept: bool = False,
                   max_paths: int = DEFAULT_MAX_PATHS, max_positions: int = DEFAULT_MAX_POSITIONS,
                   max_tokens: int = 256, texts: bool = True, start=None) -> LanguageCounts:
    """Count the texts, token paths and model positions of ``grammar`` over ``vocab`` (no model).

    grammar: a masker ``Grammar``; vocab: list of bytes (token id = index). start: a ``Matcher``
    of this grammar to count from (default: the empty prefix); it is not changed.
    texts: also list every text with its number of token paths (only once the limits are met).

    positions(s) = sum over allowed tokens v after state s of [v does not end the path] (1 +
    positions(s + v)); paths(s) likewise with 1 for each path that ends. Memoised on
    ``Matcher.state_key``.

    Raises LanguageTooLarge when the language is infinite (a token path returns to an automaton
    state it has passed: ``limit`` is "finite language"), when a path would be longer than
    ``max_tokens`` tokens, or when the paths or the positions exceed ``max_paths`` /
    ``max_positions``; the message names the limit and the count.
    """
    root = grammar.matcher(vocab) if start is None else start.fork()
    if ended(root, stop_at_accept):
        return LanguageCounts(0, 0, 0, {root.prefix_bytes: 1} if root.is_accepting() and texts else {})
    memo: dict = {}  # state key -> (paths, positions, longest, children)
    on_path: set = set()

    def visit(m, depth: int):
        key = m.state_key()
        if key in memo:
            return memo[key]
        _refuse_loop_or_depth(m, key in on_path, depth, max_tokens)
        on_path.add(key)
        paths = positions = longest = 0
        children = []
        for t in allowed_ids(m).tolist():
            child = m.fork()
            child.consume(t)
            if ended(child, stop_at_accept):
                paths, longest = paths + 1, max(longest, 1)
                children.append((t, None))
            else:
                sub = visit(child, depth + 1)
                paths, positions = paths + sub[0], positions + 1 + sub[1]
                longest = max(longest, 1 + sub[2])
                children.append((t, child.state_key()))
        on_path.discard(key)
        memo[key] = (paths, positions, longest, children)
        if len(memo) > max_positions:
            _too_large("positions", max_positions, f"more than {max_positions}")
        return memo[key]

    paths, positions, longest, _ = visit(root, 0)
    if paths > max_paths:
        _too_large("paths", max_paths, paths)
    if positions > max_positions:
        _too_large("positions", max_positions, positions)
    counts = LanguageCounts(paths, positions, longest)
    if texts:
        counts.texts = _texts(root, memo, vocab)
    return counts


def _refuse_loop_or_depth(m, loops: bool, depth: int, max_tokens: int) -> None:
    """LanguageTooLarge when the path to matcher ``m`` returns to a state it has passed (``loops``:
    the language is infinite) or is ``max_tokens`` tokens deep."""
    if loops:
        raise LanguageTooLarge(
            f"the language is infinite: after the text {_readable(m.prefix_bytes)} it can go "
            "back to an automaton state it has already passed, and loop there for ever; exact "
            "counting and enumeration need a finite language (bound every repetition: "
            "x{1,3} instead of x+ or x*)",
            "finite language", None, None)
    if depth >= max_tokens:
        raise LanguageTooLarge(
            f"a token path is longer than max_tokens={max_tokens} tokens (after the text "
            f"{_readable(m.prefix_bytes)}): the language may be infinite, or its texts too long "
            "for the model's context", "max_tokens", max_tokens, None)


def _readable(data: bytes) -> str:
    """The last 40 bytes of a prefix as quoted text; bytes that are not (yet) whole UTF-8
    characters are written \\xNN."""
    return '"' + data[-40:].decode("utf-8", errors="backslashreplace") + '"'


def _too_large(what: str, limit: int, count) -> None:
    names = {"paths": "token paths", "positions": "model positions"}
    raise LanguageTooLarge(
        f"the language has {count} {names[what]}, more than max_{what}={limit}: an exact "
        f"enumeration would take too long (raise max_{what}, or shorten the texts or the choices)",
        f"max_{what}", limit, count if isinstance(count, int) else None)


def _texts(root, memo: dict, vocab: list[bytes]) -> dict[bytes, int]:
    """Every text with its number of token paths, from the memoised walk (suffixes per state)."""
    suffixes: dict = {}

    def below(key) -> dict[bytes, int]:
        if key in suffixes:
            return suffixes[key]
        out: dict[bytes, int] = {}
        for t, child in memo[key][3]:
            piece = vocab[t]
            for rest, n in ({b"": 1} if child is None else below(child)).items():
                out[piece + rest] = out.get(piece + rest, 0) + n
        suffixes[key] = out
        return out

    prefix = root.prefix_bytes
    return {prefix + rest: n for rest, n in below(root.state_key()).items()}


def count_paths(grammar, vocab: list[bytes], **limits) -> dict[bytes, int]:
    """Per text of the grammar (bytes), how many token paths spell it; see :func:`count_language`."""
    return count_language(grammar, vocab, **limits).texts


def count_positions(grammar, vocab: list[bytes], **limits) -> int:
    """How many model positions :func:`~lesson.enumeration.enumerate_paths` runs after the prompt:
    one per token path prefix that has not ended; see :func:`count_language`."""
    return count_language(grammar, vocab, texts=False, **limits).positions


def forced_kind(matcher, allowed: np.ndarray, stop_at_accept: bool = False) -> str | None:
    """Whether the position after ``matcher``'s prefix offers a real choice.

    allowed: the allowed set there (token ids). Returns
    - "token": exactly one token is allowed;
    - "split": several tokens are allowed, but the grammar leaves one continuation of the text:
      every allowed token spells the start of the longest one, and after each of its bytes the
      grammar allows no other byte (nor ends the text), so the mask fixes the bytes and the model
      only picks how to split them into tokens;
    - None: a real choice (two allowed tokens lead to different texts).
    """
    if len(allowed) == 1:
        return "token"
    vocab = matcher.vocab
    pieces = [vocab[t] for t in allowed.tolist()]
    longest = max(pieces, key=len)
    if not all(longest.startswith(p) for p in pieces):
        return None
    probe = matcher.fork()
    for i in range(1, len(longest)):
        probe.consume_bytes(longest[i - 1:i])
        if stop_at_accept and probe.is_accepting():
            return None
        if {vocab[t][0] for t in allowed_ids(probe).tolist()} != {longest[i]}:
            return None
    return "split"
