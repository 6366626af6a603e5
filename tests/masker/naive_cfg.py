"""A deliberately naive context-free recognizer, independent of the Earley code: a fixpoint
over "rule R derives text[i:j]" facts, evaluated on characters straight from the syntax tree.
Exponential-free but slow (cubic and more); only for texts of a few characters."""

from __future__ import annotations

from masker.grammar_ast import Alt, Chars, Ref, Repeat, Seq


def naive_accepts(rules: dict, text: str) -> bool:
    """True when ``rules['root']`` derives ``text`` (rules: name -> grammar_ast tree)."""
    n = len(text)
    facts: set[tuple[str, int, int]] = set()

    def spans(node, i: int) -> set[int]:
        """Every j such that ``node`` derives text[i:j] under the facts found so far."""
        if isinstance(node, Chars):
            ok = i < n and any(lo <= ord(text[i]) <= hi for lo, hi in node.ranges)
            return {i + 1} if ok else set()
        if isinstance(node, Ref):
            return {j for j in range(i, n + 1) if (node.name, i, j) in facts}
        if isinstance(node, Seq):
            ends = {i}
            for item in node.items:
                ends = {j for e in ends for j in spans(item, e)}
            return ends
        if isinstance(node, Alt):
            return set().union(*(spans(item, i) for item in node.items))
        assert isinstance(node, Repeat)
        ends, out = {i}, set()
        limit = node.hi if node.hi is not None else node.lo + n + 1
        for count in range(limit + 1):
            if count >= node.lo:
                out |= ends
            ends = {j for e in ends for j in spans(node.item, e)}
            if not ends:
                break
        return out

    changed = True
    while changed:
        changed = False
        for name, node in rules.items():
            for i in range(n + 1):
                for j in spans(node, i):
                    if (name, i, j) not in facts:
                        facts.add((name, i, j))
                        changed = True
    return ("root", 0, n) in facts


class _TooDeep(Exception):
    pass


def sample_texts(rules: dict, rng, n: int, max_depth: int = 12) -> list[str]:
    """Up to ``n`` texts derived from ``root`` by random expansion (independent of our
    compiler: it reads the syntax tree only). Expansions deeper than ``max_depth`` are dropped."""

    def expand(node, depth: int) -> str:
        if depth > max_depth:
            raise _TooDeep
        if isinstance(node, Chars):
            lo, hi = rng.choice(node.ranges)
            cp = rng.randint(lo, min(hi, lo + 300))
            return chr(cp) if not 0xD800 <= cp <= 0xDFFF else chr(0xE000)
        if isinstance(node, Ref):
            return expand(rules[node.name], depth + 1)
        if isinstance(node, Seq):
            return "".join(expand(item, depth) for item in node.items)
        if isinstance(node, Alt):
            return expand(rng.choice(node.items), depth)
        count = rng.randint(node.lo, node.lo + 2 if node.hi is None else node.hi)
        return "".join(expand(node.item, depth) for _ in range(count))

    out = []
    for _ in range(4 * n):
        try:
            out.append(expand(rules["root"], 0))
        except _TooDeep:
            continue
        if len(out) == n:
            break
    return out
