"""Hypothesis strategies for random regular expressions, choice sets and token walks."""

from __future__ import annotations

from hypothesis import strategies as st

ATOMS = ["a", "b", "ñ", "é", "«", "—", "😀", r"\d", r"\w", r"\s", r"\W", "[a-c]", "[^ab]",
         "[ñ-ó]", ".", r"\.", r"\x41", r"\u00e9", r"[\d_]", "[«»—]", "[^\\x00-\\x7f]", "1", "12"]
QUANTIFIERS = ["*", "+", "?", "{2}", "{0,2}", "{1,}", "*?", "{1,3}"]


def _extend(children):
    return st.one_of(
        st.tuples(children, children).map(lambda t: t[0] + t[1]),
        st.tuples(children, children).map(lambda t: f"(?:{t[0]}|{t[1]})"),
        st.tuples(children, st.sampled_from(QUANTIFIERS)).map(lambda t: f"(?:{t[0]}){t[1]}"),
        children.map(lambda c: f"({c})"),
    )


REGEXES = st.recursive(st.sampled_from(ATOMS), _extend, max_leaves=8)
TEXT_ALPHABET = "ab c\nñéó«»—😀A_.129"
TEXTS = st.text(alphabet=TEXT_ALPHABET, max_size=6)
CHOICE_SETS = st.lists(st.text(alphabet="ab1ñ«😀 ", min_size=0, max_size=5), min_size=1,
                       max_size=6)

GBNF_ATOMS = ['"a"', '"b"', '"ñ"', '"("', '")"', '"ab"', "[a-c]", "[^a-z]", '"😀"', '""', '","']
RULE_NAMES = ["root", "r1", "r2", "r3"]
GBNF_QUANTIFIERS = ["*", "+", "?", "{1,2}", "{2}", "{0,10}", "{9,11}"]  # > 8: doubling helpers


def _gbnf_extend(children):
    return st.one_of(
        st.tuples(children, children).map(lambda t: f"{t[0]} {t[1]}"),
        st.tuples(children, children).map(lambda t: f"({t[0]} | {t[1]})"),
        st.tuples(children, st.sampled_from(GBNF_QUANTIFIERS)).map(lambda t: f"({t[0]}){t[1]}"),
    )


GBNF_BODIES = st.recursive(st.one_of(st.sampled_from(GBNF_ATOMS), st.sampled_from(RULE_NAMES)),
                           _gbnf_extend, max_leaves=6)


@st.composite
def gbnf_grammars(draw):
    """2 to 4 rules that may refer to each other (recursion included); each rule also has a
    terminal-only alternative so most grammars are productive."""
    n = draw(st.integers(2, 4))
    lines = []
    for name in RULE_NAMES[:n]:
        body = draw(GBNF_BODIES)
        for other in RULE_NAMES[n:]:
            body = body.replace(other, "root")
        base = draw(st.sampled_from(GBNF_ATOMS))
        lines.append(f"{name} ::= {body} | {base}")
    return "\n".join(lines)
