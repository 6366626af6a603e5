"""llguidance 1.9.1 as an independent oracle for allowed-token sets (see shared/spec/oracles.md).

Forcing (canonical-token fast-forward) is switched off with ``%llguidance {"no_forcing": true}``,
which exists only in Lark syntax, so every grammar is wrapped in Lark. The end of text is mapped to
an extra token id ``len(vocab)`` (EOS): its bit is set iff the oracle may stop there, which we
compare with ``Matcher.is_accepting()``.

Known differences by design (the comparison skips or states them):
- ids that llguidance classifies as special (any token starting with byte 0xFF, e.g. 255) are never
  allowed there; valid UTF-8 never contains 0xFF, so our masks never allow them either, and they are
  compared like the others;
- llguidance's ``\\d \\w \\s`` are Unicode unless ``use_ascii`` says otherwise: ``regex_lark`` passes
  ``"dws"`` to match our ASCII classes;
- Lark terminals (and GBNF rules the converter turns into terminals) are greedy lexemes; only
  grammars where greediness cannot change the language are compared as CFGs.

Usage::

    grammar = compile_regex(rx)
    report = compare_walks(grammar, regex_lark(rx), vocab, n_walks=8, seed=1)
    assert report.mismatches == [] and report.states >= 20
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

import llguidance
from llguidance import LLMatcher, LLTokenizer, TokenizerWrapper

NO_FORCING = '%llguidance {"no_forcing": true}\n'


def regex_lark(pattern: str, use_ascii: str = "dws") -> str:
    """A Lark grammar whose texts are the full matches of ``pattern`` (one lexeme)."""
    return NO_FORCING + "start: /" + llguidance.regex_to_lark(pattern, use_ascii) + "/\n"


def gbnf_lark(gbnf: str) -> str:
    """llguidance's own GBNF -> Lark conversion, with forcing switched off."""
    return llguidance.grammar_from("gbnf", gbnf).replace("%llguidance {}", NO_FORCING, 1)


def lark(src: str) -> str:
    """A hand-written Lark grammar with forcing switched off."""
    return NO_FORCING + src


def json_schema_lark(schema: dict, whitespace: str = "compact") -> str:
    """A JSON Schema as Lark ``%json``; compact = no whitespace, ',' and ':' separators."""
    schema = dict(schema)
    if whitespace == "compact":
        schema["x-guidance"] = {"whitespace_flexible": False}
    elif whitespace != "flexible":
        raise ValueError(f"whitespace must be 'compact' or 'flexible', got {whitespace!r}")
    return NO_FORCING + "start: %json " + json.dumps(schema) + "\n"


class _Tokenizer:
    """What ``TokenizerWrapper`` reads: tokens, EOS id and a (greedy) encoder."""

    def __init__(self, vocab: list[bytes]):
        self.tokens = list(vocab) + [b"\xff<eos>"]
        self.eos_token_id = len(vocab)
        self.bos_token_id = None
        self.special_token_ids = [len(vocab)]
        self._by_bytes = {tok: i for i, tok in enumerate(vocab) if tok}
        self._longest = max(map(len, vocab))

    def __call__(self, data: bytes) -> list[int]:
        ids, i = [], 0
        while i < len(data):
            for n in range(min(self._longest, len(data) - i), 0, -1):
                if data[i:i + n] in self._by_bytes:
                    ids.append(self._by_bytes[data[i:i + n]])
                    i += n
                    break
            else:
                i += 1  # a byte no token spells: only matters for forcing, which is off
        return ids


_TOKENIZERS: dict[tuple, LLTokenizer] = {}


def tokenizer(vocab: list[bytes]) -> LLTokenizer:
    key = tuple(vocab)
    if key not in _TOKENIZERS:
        _TOKENIZERS[key] = LLTokenizer(TokenizerWrapper(_Tokenizer(list(vocab))))
    return _TOKENIZERS[key]


class OracleLimit(ValueError):
    """llguidance stopped at one of its own work limits (e.g. 2000 Earley items per row, or a
    grammar source «too deeply nested»): it gives no verdict, which says nothing about our masks."""


class Oracle:
    """One llguidance matcher: ``allowed()`` -> (set of ids < len(vocab), may_end)."""

    def __init__(self, lark_grammar: str, vocab: list[bytes], _matcher=None):
        self.vocab = vocab
        self.n = len(vocab)
        self.matcher = _matcher or LLMatcher(tokenizer(vocab), lark_grammar, log_level=0)
        if self.matcher.is_error():
            error = self.matcher.get_error()
            # its own nesting limit on a grammar's source (a deep random grammar): no verdict
            kind = OracleLimit if "too deeply nested" in error else ValueError
            raise kind(f"llguidance refused the grammar: {error}")

    def allowed(self) -> tuple[set[int], bool]:
        bits = self.matcher.compute_bitmask()
        ids = {i for i in range(self.n + 1) if bits[i >> 3] >> (i & 7) & 1}
        return ids - {self.n}, self.n in ids

    def consume(self, token_id: int) -> None:
        if not self.matcher.consume_token(token_id):
            error = self.matcher.get_error()
            kind = OracleLimit if "ParserTooComplex" in error else ValueError
            raise kind(f"llguidance refused token {token_id}: {error}")

    def copy(self) -> "Oracle":
        return Oracle("", self.vocab, self.matcher.deep_copy())


@dataclass
class WalkReport:
    states: int = 0                       # prefixes compared
    mismatches: list = field(default_factory=list)  # (prefix bytes, only ours, only oracle, ends)


def compare_walks(grammar, lark_grammar: str, vocab: list[bytes], *, n_walks: int = 8,
                  max_steps: int = 30, seed: int = 0, min_states: int = 20,
                  max_mismatches: int = 5) -> WalkReport:
    """Random token walks through our mask; at each prefix compare the allowed sets and the
    may-end bit with llguidance. Walks at least ``n_walks`` times and until ``min_states``
    prefixes were compared (small languages repeat prefixes); stops after ``max_mismatches``."""
    rng, report = random.Random(seed), WalkReport()
    root = Oracle(lark_grammar, vocab)
    walks = 0
    while walks < n_walks or (report.states < min_states and walks < 10 * n_walks):
        walks += 1
        ours, theirs = grammar.matcher(vocab), root.copy()
        for _ in range(max_steps):
            mask = ours.mask()
            our_ids = set(mask.nonzero()[0].tolist())
            their_ids, may_end = theirs.allowed()
            report.states += 1
            if our_ids != their_ids or may_end != ours.is_accepting():
                report.mismatches.append((ours.prefix_bytes, sorted(our_ids - their_ids)[:10],
                                          sorted(their_ids - our_ids)[:10],
                                          (ours.is_accepting(), may_end)))
                if len(report.mismatches) >= max_mismatches:
                    return report
                break
            if not our_ids or (ours.is_accepting() and rng.random() < 0.15):
                break
            token_id = rng.choice(sorted(our_ids))
            ours.consume(token_id)
            theirs.consume(token_id)
    return report


def ast_lark(rules: dict) -> str:
    """Our GBNF rules (name -> ``grammar_ast`` tree, from ``masker.gbnf_parse``) as Lark in
    which every rule is lowercase and every terminal a one-character lexeme, so llguidance's
    greedy lexing cannot matter and it behaves as a plain context-free grammar."""
    from masker.grammar_ast import Alt, Chars, Ref, Seq

    def name(rule: str) -> str:
        return "start" if rule == "root" else "r_" + rule.replace("-", "_").lower()

    def expr(node) -> str:
        if isinstance(node, Chars):
            parts = "".join(f"\\x{{{lo:x}}}" if lo == hi else f"\\x{{{lo:x}}}-\\x{{{hi:x}}}"
                            for lo, hi in node.ranges)
            return f"/[{parts}]/" if parts else '/[^\\x{0}-\\x{10ffff}]/'
        if isinstance(node, Ref):
            return name(node.name)
        if isinstance(node, Seq):
            return "(" + " ".join(expr(i) for i in node.items) + ")" if node.items else '""'
        if isinstance(node, Alt):
            return "(" + " | ".join(expr(i) for i in node.items) + ")"
        inner = expr(node.item)
        if node.hi is None:
            return "(" + " ".join([inner] * node.lo + [f"({inner})*"]) + ")"
        tail = '""'
        for _ in range(node.hi - node.lo):
            tail = f"({inner} {tail})?"
        return "(" + " ".join([inner] * node.lo + [tail]) + ")"

    return NO_FORCING + "\n".join(f"{name(n)}: {expr(node)}" for n, node in rules.items()) + "\n"
