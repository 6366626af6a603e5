"""A finite grammar G (a set of texts) and its allowed sets over a token vocabulary, at byte level.

The allowed set after the bytes ``prefix`` already written is

    A(prefix) = { v in V : prefix + bytes(v) is a prefix of some g in G }

(plus the end token, when there is one, exactly when ``prefix`` is itself a text of G). Bytes, not
characters: a token may hold half of a UTF-8 character, and such tokens are allowed whenever their
bytes fit. Because every single byte is a token of the vocabulary, A(prefix) is never empty while
``prefix`` is a proper prefix of some text; that is what makes masked generation always finish inside G.
"""

from __future__ import annotations

from masker.errors import MaskerError


class GrammarError(MaskerError, ValueError):
    """The list of texts cannot be used as a grammar for masked generation (the message says why)."""


class FiniteGrammar:
    """G as a set of byte strings, with allowed sets for the token vocabulary ``vocab``.

    texts: list of str (encoded as UTF-8) or bytes; duplicates are dropped, order is kept.
    vocab: list of bytes, the token id is the index (every one of the 256 bytes must be a token).
    end_token: None, or the id of a token that ends the answer. Without it, no text may be a proper
        prefix of another one (the generation could not know whether to stop); with it, the end
        token is allowed exactly when the prefix is a text of G, and never as ordinary bytes.

    Raises GrammarError for an empty list, an empty text, a text that is a proper prefix of another
    one (without ``end_token``), a vocabulary that lacks a single byte, or a bad ``end_token``.
    """

    def __init__(self, texts, vocab: list[bytes], end_token: int | None = None):
        self.vocab = list(vocab)
        self.texts = _as_bytes(texts)
        self.end_token = end_token
        self._ids_of: dict[bytes, list[int]] = {}  # bytes -> token ids (a vocabulary may repeat one)
        for i, piece in enumerate(self.vocab):
            self._ids_of.setdefault(piece, []).append(i)
        self.max_token_bytes = max(len(b) for b in self.vocab)
        missing = [b for b in range(256) if bytes([b]) not in self._ids_of]
        if missing:
            raise GrammarError(f"the vocabulary lacks the single byte {missing[0]:#04x}: masked "
                               "generation needs all 256 bytes as tokens, or some prefix could get stuck")
        if end_token is not None and not 0 <= end_token < len(self.vocab):
            raise GrammarError(f"end_token must be a token id in 0..{len(self.vocab) - 1}, found {end_token}")
        if end_token is None:
            _check_prefix_free(self.texts)
        else:
            self._check_writable()

    def _check_writable(self) -> None:
        """With an end token reserved, some byte of a text may have no other token to write it."""
        for text in self.texts:
            for i in range(len(text)):
                if not any(t != self.end_token for t in self.allowed_ids(text[:i])):
                    raise GrammarError(
                        f"the text {text.decode('utf-8', 'replace')!r} cannot be written: at byte {i} "
                        f"only the end token {self.end_token} would fit, and it is reserved for ending")

    def __len__(self) -> int:
        return len(self.texts)

    def __repr__(self) -> str:
        shown = ", ".join(repr(t.decode("utf-8", "replace")) for t in self.texts[:3])
        more = f", ... ({len(self.texts)} texts)" if len(self.texts) > 3 else ""
        return f"FiniteGrammar([{shown}{more}])"

    def contains(self, text) -> bool:
        """True when ``text`` (str or bytes) is exactly one of the texts of G."""
        return _one_as_bytes(text) in self.texts

    def is_prefix(self, prefix: bytes) -> bool:
        """True when ``prefix`` is a prefix of some text of G (the empty prefix always is)."""
        return any(g.startswith(prefix) for g in self.texts)

    def remainders(self, prefix: bytes) -> list[bytes]:
        """What is left to write of every text that starts with ``prefix`` (b"" for a complete one)."""
        return [g[len(prefix):] for g in self.texts if g.startswith(prefix)]

    def allowed_ids(self, prefix: bytes) -> list[int]:
        """The allowed set A(prefix) as sorted token ids.

        For each text still possible, every token whose bytes start what is left of it; a token is at
        most ``max_token_bytes`` long, so each text costs that many dictionary look-ups.
        """
        ids = set()
        for rest in self.remainders(prefix):
            if rest == b"" and self.end_token is not None:
                ids.add(self.end_token)
            for n in range(1, min(len(rest), self.max_token_bytes) + 1):
                ids.update(t for t in self._ids_of.get(rest[:n], ()) if t != self.end_token)
        return sorted(ids)

    def brute_force_allowed_ids(self, prefix: bytes) -> list[int]:
        """The same set by the definition, checking every token of the vocabulary (the reference)."""
        ids = [v for v, piece in enumerate(self.vocab)
               if v != self.end_token and any(g.startswith(prefix + piece) for g in self.texts)]
        if self.end_token is not None and prefix in self.texts:
            ids.append(self.end_token)
        return sorted(ids)

    def is_complete(self, prefix: bytes) -> bool:
        """True when ``prefix`` is a text of G."""
        return prefix in self.texts

    def is_forced(self, prefix: bytes, allowed: list[int] | None = None) -> bool:
        """True when only one continuation of the text is possible after ``prefix``.

        That is: every allowed token spells the start of one and the same byte string (the tokens
        differ only in how they split it), so the mask decides the bytes and the model only the split.
        ``allowed``: the allowed set of ``prefix`` when the caller already has it.
        """
        allowed = self.allowed_ids(prefix) if allowed is None else allowed
        if self.end_token is not None and self.end_token in allowed:
            return len(allowed) == 1
        pieces = sorted((self.vocab[v] for v in allowed), key=len)
        return bool(pieces) and all(pieces[-1].startswith(p) for p in pieces)


def _one_as_bytes(text) -> bytes:
    if isinstance(text, str):
        return text.encode("utf-8")
    if isinstance(text, (bytes, bytearray)):
        return bytes(text)
    raise GrammarError(f"each text must be a str or bytes, found {type(text).__name__}: {text!r}")


def _as_bytes(texts) -> list[bytes]:
    if isinstance(texts, (str, bytes)):
        raise GrammarError("texts must be a list of texts, not one text: write [text]")
    out: list[bytes] = []
    for text in texts:
        b = _one_as_bytes(text)
        if b == b"":
            raise GrammarError("a text of the grammar is empty: an empty answer needs no model")
        if b not in out:
            out.append(b)
    if not out:
        raise GrammarError("the grammar has no texts: the mask would allow nothing (give at least one)")
    return out


def _check_prefix_free(texts: list[bytes]) -> None:
    ordered = sorted(texts)
    for shorter, longer in zip(ordered, ordered[1:]):  # a proper prefix sorts right before an extension
        if longer.startswith(shorter):
            raise GrammarError(
                f"the text {shorter.decode('utf-8', 'replace')!r} is a proper prefix of "
                f"{longer.decode('utf-8', 'replace')!r}: after writing it, the generation cannot tell "
                "whether to stop. Close every text with a delimiter (a JSON object ends with }), "
                "or give end_token=<id> so the model itself says where the answer ends.")
