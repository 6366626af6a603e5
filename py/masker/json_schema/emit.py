"""Write the intermediate form (``ir.py``) as regex or GBNF text.

``to_regex`` inlines every rule (the rules must not be recursive) and writes Python ``re``
syntax restricted to what ``masker.compile_regex`` reads: literals, ``\\xHH`` / ``\\uHHHH``
escapes, classes of ranges, ``(?:...)`` groups, ``|``, and ``* + ? {m,n}``. ``to_gbnf`` writes
one GBNF rule per named rule (llama.cpp ``grammars/README.md`` syntax, read by
``masker.compile_cfg``). ``to_ast`` builds the tree the regex text stands for directly, so
the compiler never parses its own output.
"""

from __future__ import annotations

from .. import grammar_ast as ast
from .errors import LimitExceeded
from .ir import Alt, Chars, Lit, Node, Ranges, Ref, Repeat, Rules, Seq, refs_in

REGEX_META = set("\\.^$|?*+()[]{}-")


def _regex_char(cp: int, in_class: bool) -> str:
    c = chr(cp)
    if cp < 0x20 or cp == 0x7F:
        return f"\\x{cp:02x}"
    if cp < 0x80:
        return "\\" + c if c in REGEX_META else c
    if cp <= 0xFFFF and not c.isprintable():
        return f"\\u{cp:04x}"
    return c


def _regex_class(ranges: Ranges) -> str:
    parts = []
    for lo, hi in ranges:
        a = _regex_char(lo, True)
        if hi == lo:
            parts.append(a)
        elif hi == lo + 1:
            parts.append(a + _regex_char(hi, True))
        else:
            parts.append(a + "-" + _regex_char(hi, True))
    return "[" + "".join(parts) + "]"


def _quant(lo: int, hi: int | None) -> str:
    """The quantifier for ``lo`` to ``hi`` repetitions (bounds written as integers)."""
    if (lo, hi) == (0, None):
        return "*"
    if (lo, hi) == (1, None):
        return "+"
    if (lo, hi) == (0, 1):
        return "?"
    if hi is None:
        return f"{{{int(lo)},}}"
    if lo == hi:
        return f"{{{int(lo)}}}"
    return f"{{{int(lo)},{int(hi)}}}"


class _RegexWriter:
    """Writes nodes as regex text, each (node, atom) once; counts the characters written."""

    def __init__(self, rules: Rules, max_chars: int):
        self.rules, self.max_chars, self.size = rules, max_chars, 0
        self.cache: dict[tuple[int, bool], str] = {}
        self.keep: list[Node] = []

    def write(self, node: Node, atom: bool = False) -> str:
        """The regex text of ``node``; ``atom``: it must read as one item before a quantifier
        or inside a sequence. Raises LimitExceeded past ``max_chars`` characters."""
        key = (id(node), atom)
        if key not in self.cache:
            text = self._write(node, atom)
            self.size += len(text)
            if self.size > self.max_chars:
                raise LimitExceeded("the regex for this schema grows too long",
                                    "max_regex_chars", self.max_chars,
                                    "raise max_regex_chars or simplify the schema", code="limit.schema_regex")
            self.cache[key] = text
            self.keep.append(node)  # ids stay valid while cached
        return self.cache[key]

    def _write(self, node: Node, atom: bool) -> str:
        if isinstance(node, Ref):
            return self.write(self.rules[node.name], atom)
        if isinstance(node, Lit):
            text = "".join(_regex_char(ord(c), False) for c in node.text)
            return f"(?:{text})" if atom and len(node.text) != 1 else text
        if isinstance(node, Chars):
            return _regex_class(node.ranges)
        if isinstance(node, Seq):
            text = "".join(self.write(it, isinstance(it, Alt)) for it in node.items)
            return f"(?:{text})" if atom else text
        if isinstance(node, Alt):
            if not node.items:
                return "[^\\x00-\\U0010ffff]"  # matches nothing
            text = "|".join(self.write(it) for it in node.items)
            return f"(?:{text})"
        if isinstance(node, Repeat):
            inner = self.write(node.item, True)
            if isinstance(node.item, Repeat):
                inner = f"(?:{inner})"  # x{2}{3} is not a regex
            text = inner + _quant(node.lo, node.hi)
            return f"(?:{text})" if atom else text
        raise TypeError(f"unknown node {node!r}")


def to_regex(rules: Rules, start: str = "root", max_chars: int = 2_000_000) -> str:
    """Inline the (non-recursive) rules into one regex string, from rule ``start``.

    Raises LimitExceeded if the text grows past ``max_chars`` characters (shared
    sub-expressions are written out once per use).
    """
    return _RegexWriter(rules, max_chars).write(Ref(start))


def to_ast(rules: Rules, start: str = "root"):
    """The (non-recursive) rules inlined into one ``grammar_ast`` tree from rule ``start``,
    the tree ``compile_regex`` would parse from ``to_regex``'s text, built without the text.
    Shared sub-expressions stay shared (one node per IR node). Recursion depth follows the
    nesting of the rules (RecursionError past Python's limit)."""
    return _AstWriter(rules, inline=True).conv(Ref(start))


def to_ast_rules(rules: Rules, start: str = "root") -> dict:
    """The rules reachable from ``start`` as ``grammar_ast`` trees with ``Ref(name, 0)``
    references: what ``parse_gbnf`` returns for ``to_gbnf``'s text, ``shared-K`` rules
    included (so each tree is a tree, not a graph), built without the text."""
    order, hoisted, shared = _gbnf_layout(rules, start)
    writer = _AstWriter(rules, inline=False, shared=shared)
    out = {name: writer.conv(rules[name], top=True) for name in order}
    for node in hoisted:
        out[shared[id(node)]] = writer.conv(node, top=True)
    return out


class _AstWriter:
    """IR node -> ``grammar_ast`` node, memoized per IR node (by identity)."""

    def __init__(self, rules: Rules, inline: bool, shared: dict[int, str] | None = None):
        self.rules, self.inline, self.shared = rules, inline, shared or {}
        self.memo: dict[int, object] = {}
        self.keep: list[Node] = []

    def conv(self, node: Node, top: bool = False):
        """``node`` as a tree; a node of ``shared`` is a reference to its rule, except at the
        ``top`` of that rule."""
        if not top and id(node) in self.shared:
            return ast.Ref(self.shared[id(node)], 0)
        found = self.memo.get(id(node))
        if found is not None and not top:
            return found
        if isinstance(node, Ref):
            out = self.conv(self.rules[node.name]) if self.inline else ast.Ref(node.name, 0)
        elif isinstance(node, Lit):
            out = ast.literal(node.text)
        elif isinstance(node, Chars):
            out = node
        elif isinstance(node, Seq):
            out = ast.Seq(tuple(self.conv(it) for it in node.items))
        elif isinstance(node, Alt):
            out = (ast.Alt(tuple(self.conv(it) for it in node.items)) if node.items
                   else ast.Chars(()))
        elif isinstance(node, Repeat):
            out = ast.Repeat(self.conv(node.item), node.lo, node.hi)
        else:
            raise TypeError(f"unknown node {node!r}")
        self.memo[id(node)] = out
        self.keep.append(node)  # ids stay valid while memoized
        return out


# ---- GBNF -----------------------------------------------------------------

def _gbnf_char(cp: int, in_class: bool) -> str:
    c = chr(cp)
    if cp < 0x20 or cp == 0x7F:
        return f"\\x{cp:02x}"
    if in_class and c in '"\\]-^[':
        return f"\\x{cp:02x}"
    if c in ('"', "\\"):
        return "\\" + c
    if cp >= 0x80 and not c.isprintable():
        return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"
    return c


def _gbnf(node: Node, shared: dict[int, str], top: bool = False) -> str:
    """GBNF text of ``node``; nodes in ``shared`` (by id) are written as their rule name,
    except at the ``top`` of their own rule."""
    if not top and id(node) in shared:
        return shared[id(node)]
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Lit):
        body = "".join(_gbnf_char(ord(c), False) for c in node.text)
        return f'"{body}"'
    if isinstance(node, Chars):
        body = "".join(_gbnf_char(lo, True) if lo == hi else
                       _gbnf_char(lo, True) + "-" + _gbnf_char(hi, True)
                       for lo, hi in node.ranges)
        return "[" + body + "]"
    if isinstance(node, Seq):
        return " ".join(_gbnf_group(it, shared) if isinstance(it, Alt) else _gbnf(it, shared)
                        for it in node.items)
    if isinstance(node, Alt):
        if not node.items:
            return "[^\\x00-\\U0010ffff]"
        return " | ".join(_gbnf(it, shared) for it in node.items)
    if isinstance(node, Repeat):
        inner = node.item
        simple = isinstance(inner, (Ref, Chars, Lit)) or id(inner) in shared
        text = _gbnf(inner, shared) if simple else _gbnf_group(inner, shared)
        return text + _quant(node.lo, node.hi)
    raise TypeError(f"unknown node {node!r}")


def _gbnf_group(node: Node, shared: dict[int, str]) -> str:
    text = _gbnf(node, shared)
    return text if id(node) in shared else "(" + text + ")"


def _shared_nodes(rules: Rules, order: list[str]) -> list[Node]:
    """Seq/Alt/Repeat objects reached from two places or more (the intermediate form is a DAG:
    e.g. the tail of an object's member list), by identity."""
    seen: set[int] = set()
    shared: list[Node] = []

    def visit(node: Node) -> None:
        if not isinstance(node, (Seq, Alt, Repeat)):
            return
        if id(node) in seen:
            shared.append(node)
            return
        seen.add(id(node))
        for it in (node.item,) if isinstance(node, Repeat) else node.items:
            visit(it)

    for name in order:
        visit(rules[name])
    return list({id(n): n for n in shared}.values())


def _gbnf_layout(rules: Rules, start: str) -> tuple[list[str], list[Node], dict[int, str]]:
    """(rule names reachable from ``start``, start first; the sub-expressions used in several
    places; their rule names ``shared-K`` by node identity)."""
    order, todo, seen = [], [start], {start}
    while todo:
        name = todo.pop(0)
        order.append(name)
        for n in sorted(refs_in(rules[name])):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    tops = {id(rules[r]) for r in order}
    hoisted = [n for n in _shared_nodes(rules, order) if id(n) not in tops]
    return order, hoisted, {id(node): f"shared-{k}" for k, node in enumerate(hoisted)}


def to_gbnf(rules: Rules, start: str = "root") -> str:
    """One ``name ::= expr`` line per rule reachable from ``start``, start first;
    sub-expressions used in several places get their own rules (``shared-K``)."""
    order, hoisted, shared = _gbnf_layout(rules, start)
    lines = [f"{n} ::= {_gbnf(rules[n], shared, top=True)}" for n in order]
    lines += [f"{shared[id(node)]} ::= {_gbnf(node, shared, top=True)}" for node in hoisted]
    return "\n".join(lines) + "\n"
