"""Write the intermediate form (`json_schema_ir`) as regex or GBNF text.

`to_regex` inlines every rule (the rules must not be recursive) and writes
Python `re` syntax restricted to what `masker.compile_regex` reads: literals,
`\\xHH` / `\\uHHHH` escapes, classes of ranges, `(?:...)` groups, `|`, and
`* + ? {m,n}`. `to_gbnf` writes one GBNF rule per named rule.
"""
from __future__ import annotations

from .json_schema_errors import LimitExceeded
from .json_schema_ir import Alt, Chars, Lit, Ref, Repeat, Seq, refs_in

REGEX_META = set("\\.^$|?*+()[]{}-")


def _regex_char(cp, in_class):
    c = chr(cp)
    if cp < 0x20 or cp == 0x7F:
        return "\\x%02x" % cp
    if cp < 0x80:
        return "\\" + c if c in REGEX_META else c
    if cp <= 0xFFFF and not c.isprintable():
        return "\\u%04x" % cp
    return c


def _regex_class(ranges):
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


def _quant(lo, hi):
    if (lo, hi) == (0, None):
        return "*"
    if (lo, hi) == (1, None):
        return "+"
    if (lo, hi) == (0, 1):
        return "?"
    if hi is None:
        return "{%d,}" % lo
    if lo == hi:
        return "{%d}" % lo
    return "{%d,%d}" % (lo, hi)


class _RegexWriter:
    def __init__(self, rules, max_chars):
        self.rules, self.max_chars, self.size = rules, max_chars, 0
        self.cache, self.keep = {}, []

    def write(self, node, atom=False):
        key = (id(node), atom)
        if key not in self.cache:
            text = self._write(node, atom)
            self.size += len(text)
            if self.size > self.max_chars:
                raise LimitExceeded("the regex for this schema grows too long",
                                    "max_regex_chars", self.max_chars,
                                    "raise max_regex_chars or simplify the schema")
            self.cache[key] = text
            self.keep.append(node)  # ids stay valid while cached
        return self.cache[key]

    def _write(self, node, atom):
        if isinstance(node, Ref):
            return self.write(self.rules[node.name], atom)
        if isinstance(node, Lit):
            text = "".join(_regex_char(ord(c), False) for c in node.text)
            return "(?:%s)" % text if atom and len(node.text) != 1 else text
        if isinstance(node, Chars):
            return _regex_class(node.ranges)
        if isinstance(node, Seq):
            text = "".join(self.write(it, isinstance(it, Alt)) for it in node.items)
            return "(?:%s)" % text if atom else text
        if isinstance(node, Alt):
            if not node.items:
                return "[^\\x00-\\U0010ffff]"  # matches nothing
            text = "|".join(self.write(it) for it in node.items)
            return "(?:%s)" % text
        if isinstance(node, Repeat):
            inner = self.write(node.item, True)
            if isinstance(node.item, Repeat):
                inner = "(?:%s)" % inner  # x{2}{3} is not a regex
            text = inner + _quant(node.lo, node.hi)
            return "(?:%s)" % text if atom else text
        raise TypeError("unknown node %r" % (node,))


def to_regex(rules, start="root", max_chars=2_000_000):
    """Inline the (non-recursive) rules into one regex string.

    Raises LimitExceeded if the text grows past `max_chars` characters
    (shared sub-expressions are written out once per use).
    """
    return _RegexWriter(rules, max_chars).write(Ref(start))


# ---- GBNF -----------------------------------------------------------------

def _gbnf_char(cp, in_class):
    c = chr(cp)
    if cp < 0x20 or cp == 0x7F:
        return "\\x%02x" % cp
    if in_class and c in '"\\]-^[':
        return "\\x%02x" % cp
    if c in ('"', "\\"):
        return "\\" + c
    if cp >= 0x80 and not c.isprintable():
        return "\\u%04x" % cp if cp <= 0xFFFF else "\\U%08x" % cp
    return c


def _gbnf(node, shared, top=False):
    if not top and id(node) in shared:
        return shared[id(node)]
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Lit):
        return '"%s"' % "".join(_gbnf_char(ord(c), False) for c in node.text)
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
    raise TypeError("unknown node %r" % (node,))


def _gbnf_group(node, shared):
    text = _gbnf(node, shared)
    return text if id(node) in shared else "(" + text + ")"


def _shared_nodes(rules, order):
    """Seq/Alt/Repeat objects reached from two places or more (the intermediate
    form is a DAG: e.g. the tail of an object's member list), by identity."""
    seen, shared = set(), []

    def visit(node):
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


def to_gbnf(rules, start="root"):
    """One `name ::= expr` line per rule reachable from `start`, start first;
    sub-expressions used in several places get their own rules (`shared-K`)."""
    order, todo, seen = [], [start], {start}
    while todo:
        name = todo.pop(0)
        order.append(name)
        for n in sorted(refs_in(rules[name])):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    hoisted = [n for n in _shared_nodes(rules, order) if id(n) not in {id(rules[r]) for r in order}]
    shared = {id(node): "shared-%d" % k for k, node in enumerate(hoisted)}
    lines = ["%s ::= %s" % (n, _gbnf(rules[n], shared, top=True)) for n in order]
    lines += ["%s ::= %s" % (shared[id(node)], _gbnf(node, shared, top=True)) for node in hoisted]
    return "\n".join(lines) + "\n"
