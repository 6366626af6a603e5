"""The two editions of the course, Spanish (``site/``) and English (``site/en/``), kept in step.

For every page of ``build.PAGES`` and its English edition, the built pages must agree in:
- their sections: the same headings, at the same levels, in the same order, with the same ids
  (the language switch opens the same section in the other edition);
- their cells: as many, with the same names and flags, and the same numbers in their precomputed
  outputs (each read as the edition writes numbers: "0,448" and "0.448", "1 488 000" and
  "1,488,000", "4,85·10⁻⁶⁹" and "4.85×10⁻⁶⁹"; measured times left out);
- their quizzes: the same ids, the same number of options, the right one in the same place;
- their pictures (figures and SVGs outside the cells), with the same numbers in their labels;
- their links, each edition's page names mapped to the other's;
- the figure entries (``fig.…``) their templates read: a figure quoted in one edition is quoted
  from the same entry in the other (``Page.figures_read``).

Every page also says its language (``<html lang>``), links its other edition both ways
(``hreflang`` alternates and the language switch). The comparison is a function of two pages'
HTML, so the synthetic pages at the end show that each check can fail.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import PurePosixPath

import pytest

import build
from sitebuild import render

SUPERSCRIPTS = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
POWER = r"(?:(?:·|×)10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?"
# A number as each edition writes it (lesson.numbers): groups of three digits, then decimals.
NUMBER = {
    "es": re.compile(r"(?<![\w.,{])([-−]?\d{1,3}(?:[\u202f\u00a0]\d{3})+|[-−]?\d+)(?:,(\d+))?" + POWER),
    "en": re.compile(r"(?<![\w.,{])([-−]?\d{1,3}(?:,\d{3})+|[-−]?\d+)(?:\.(\d+))?" + POWER),
}
# A measured time ("· 2,16 s", "13 ms"): different in every run, so never compared.
DURATION = re.compile(r"\d+(?:[.,\u202f\u00a0]\d+)*(?:[.,]\d+)? ?(?:s|ms|µs|ns)(?![\w])")
SKIP_TAGS = {"script", "style", "template", "annotation"}
# What the model or the reader's data wrote (token boxes, answers): compared character for
# character, since it is the same text in both editions, not read as numbers.
GENERATED = ("tok", "tok-byte", "answer")


def numbers_in(text: str, language: str) -> list[str]:
    """Every number of ``text`` written the way of ``language``, as a canonical string (the float
    rounded to 12 significant digits), in order. Measured times are left out."""
    out = []
    for whole, decimals, power in NUMBER[language].findall(DURATION.sub(" ", text)):
        digits = re.sub(r"[\u202f\u00a0,]", "", whole).replace("−", "-")
        value = float(digits + ("." + decimals if decimals else ""))
        if power:
            value *= 10.0 ** int(power.translate(SUPERSCRIPTS))
        out.append("0" if value == 0 else f"{value:.12g}" if math.isfinite(value) else str(value))
    return out


@dataclass
class Edition:
    """What a page must share with its other edition."""
    language: str = ""
    headings: list[tuple[str, str]] = field(default_factory=list)  # (tag, id)
    cells: list[dict] = field(default_factory=list)  # name, fails, python_numbers, text
    quizzes: list[tuple[str, int, int]] = field(default_factory=list)  # (id, options, right one)
    pictures: list[dict] = field(default_factory=list)  # kind ("figure"/"svg"), text
    links: list[str] = field(default_factory=list)
    alternates: dict[str, str] = field(default_factory=dict)  # hreflang -> href
    switch: list[tuple[str, str]] = field(default_factory=list)  # (hreflang, href)


class _Reader(HTMLParser):
    VOID = {"br", "img", "input", "meta", "link", "hr", "wbr", "source", "col", "area", "base"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.page = Edition()
        self.stack: list[tuple[str, dict]] = []
        self.in_main = False

    def _inside(self, test) -> bool:
        return any(test(tag, a) for tag, a in self.stack)

    def handle_starttag(self, tag, attrs):
        a = {k: (v or "") for k, v in attrs}
        page = self.page
        if tag == "html":
            page.language = a.get("lang", "")
        if tag == "link" and a.get("rel") == "alternate":
            page.alternates[a.get("hreflang", "")] = a.get("href", "")
        if tag == "a" and a.get("data-testid") == "lang-switch":
            page.switch.append((a.get("hreflang", ""), a.get("href", "")))
        elif tag == "a" and "href" in a and self.in_main and "hreflang" not in a:  # not a link to the other edition
            page.links.append(a["href"])
        if tag in self.VOID:
            return
        classes = set(a.get("class", "").split())
        if tag == "main":
            self.in_main = True
        if self.in_main and re.fullmatch(r"h[2-6]", tag):
            page.headings.append((tag, a.get("id", "")))
        if tag == "section" and "cell" in classes:
            page.cells.append({"name": a.get("data-cell", ""), "python_numbers":
                               a.get("data-python-numbers") == "true", "fails": False, "text": [],
                               "generated": []})
        in_cell = self._inside(lambda t, x: "cell" in x.get("class", "").split())
        if tag == "div" and "cell-output" in classes and page.cells:
            page.cells[-1]["fails"] = False  # set from the output below
        if tag == "fieldset" and "quiz-question" in classes:
            page.quizzes.append([a.get("id", ""), 0, -1])
        if tag == "div" and a.get("data-testid") == "quiz-option" and page.quizzes:
            quiz = page.quizzes[-1]
            if a.get("data-correct") == "true":
                quiz[2] = quiz[1]
            quiz[1] += 1
        if self.in_main and not in_cell and (tag == "figure" or tag == "svg") and not self._inside(
                lambda t, x: t in ("figure", "svg")):
            page.pictures.append({"kind": tag, "text": []})
        self.stack.append((tag, a))

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        while self.stack:
            if self.stack.pop()[0] == tag:
                break
        if tag == "main":
            self.in_main = False

    def handle_data(self, data):
        if self._inside(lambda t, a: t in SKIP_TAGS or "data-measured" in a):
            return
        classes = lambda c: self._inside(lambda t, a: c in a.get("class", "").split())  # noqa: E731
        if classes("cell-output") and self.page.cells and not classes("out-note"):
            if classes("out-error"):
                self.page.cells[-1]["fails"] = True
            if any(classes(c) for c in GENERATED):  # the model's text: the same characters
                self.page.cells[-1]["generated"].append(data)
            else:
                self.page.cells[-1]["text"].append(data)
        elif self.page.pictures and self._inside(lambda t, a: t in ("figure", "svg")) \
                and not classes("cell"):
            self.page.pictures[-1]["text"].append(data)


def read_edition(html: str) -> Edition:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    page = reader.page
    page.quizzes = [tuple(q) for q in page.quizzes]
    return page


def _page_name(href: str, page_path: str, mapped: bool = True) -> str:
    """A link as a site path (``en/mask.html#arnes`` from ``en/`` and ``mask.html#arnes``), with
    every English page name mapped to its Spanish page's, so the two editions compare."""
    if re.match(r"[a-z]+:", href) or href.startswith("#"):
        return href
    path, _, fragment = href.partition("#")
    if not path:
        return href
    base = PurePosixPath(page_path).parent
    parts = []
    for part in (base / path).parts:
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    site_path = "/".join(parts)
    if not mapped:
        return site_path + ("#" + fragment if fragment else "")
    spanish = {entry["out"]: source for source, entry in build.ENGLISH.items()}  # every page, BUILD_ONLY or not
    if site_path.startswith("assets/") or site_path.startswith("weights/"):
        site_path = re.sub(r"\.[0-9a-f]{10}(?=\.[^.]+$)", "", site_path)  # hashed names
    elif site_path.endswith(".ipynb"):
        site_path = spanish.get(site_path.replace(".ipynb", ".html"), site_path).replace(".html", ".ipynb")
    site_path = spanish.get(site_path, site_path)
    return site_path + ("#" + fragment if fragment else "")


def edition_faults(spanish: str, english: str, es_path: str, en_path: str) -> list[str]:
    """Every way the English page ``english`` (at ``en_path``) differs from the Spanish page
    ``spanish`` (at ``es_path``) in what both editions must share, as sentences."""
    es, en = read_edition(spanish), read_edition(english)
    faults = []
    if (es.language, en.language) != ("es", "en"):
        faults.append(f"<html lang> is {es.language!r} and {en.language!r}")
    if es.headings != en.headings:
        faults.append(f"sections differ: {es.headings} against {en.headings}")
    if len(es.cells) != len(en.cells):
        faults.append(f"{len(es.cells)} cells against {len(en.cells)}")
    for number, (a, b) in enumerate(zip(es.cells, en.cells), 1):
        for key in ("name", "python_numbers", "fails"):
            if a[key] != b[key]:
                faults.append(f"cell {number}: {key} {a[key]!r} against {b[key]!r}")
        if "".join(a["generated"]).split() != "".join(b["generated"]).split():
            faults.append(f"cell {number} ({a['name'] or 'unnamed'}): the model's text differs")
        rule = "en" if a["python_numbers"] else None  # NumPy prints a point in both editions
        got_es = Counter(numbers_in(" ".join(a["text"]), rule or "es"))
        got_en = Counter(numbers_in(" ".join(b["text"]), rule or "en"))
        if got_es != got_en:
            faults.append(f"cell {number} ({a['name'] or 'unnamed'}): numbers only in Spanish "
                          f"{sorted((got_es - got_en).elements())[:12]}, only in English "
                          f"{sorted((got_en - got_es).elements())[:12]}")
    if es.quizzes != en.quizzes:
        faults.append(f"quizzes differ: {es.quizzes} against {en.quizzes}")
    if [p["kind"] for p in es.pictures] != [p["kind"] for p in en.pictures]:
        faults.append(f"pictures differ: {[p['kind'] for p in es.pictures]} against "
                      f"{[p['kind'] for p in en.pictures]}")
    else:
        for number, (a, b) in enumerate(zip(es.pictures, en.pictures), 1):
            if Counter(numbers_in(" ".join(a["text"]), "es")) != Counter(numbers_in(" ".join(b["text"]), "en")):
                faults.append(f"picture {number}: its numbers differ")
    links_es = Counter(_page_name(h, es_path) for h in es.links)
    links_en = Counter(_page_name(h, en_path) for h in en.links)
    if links_es != links_en:
        faults.append(f"links only in Spanish {sorted((links_es - links_en).elements())}, "
                      f"only in English {sorted((links_en - links_es).elements())}")
    for page, path, other, other_path in ((es, es_path, "en", en_path), (en, en_path, "es", es_path)):
        target = {lang: _page_name(href, path, False) for lang, href in page.alternates.items()}
        if target != {"es": es_path, "en": en_path}:
            faults.append(f"{path}: hreflang alternates {page.alternates}")
        if [(lang, _page_name(href, path, False)) for lang, href in page.switch] != [(other, other_path)]:
            faults.append(f"{path}: the language switch is {page.switch}")
    return faults


PAIRS = [(spec["source"], spec["out"]) for spec in build.PAGES_EN]


@pytest.mark.parametrize("es_path, en_path", PAIRS, ids=[p[1] for p in PAIRS])
def test_the_two_editions_of_a_page_agree(built, es_path, en_path):
    faults = edition_faults((built / es_path).read_text(encoding="utf-8"),
                            (built / en_path).read_text(encoding="utf-8"), es_path, en_path)
    assert not faults, "\n".join(faults)


def test_both_editions_quote_the_same_figure_entries():
    _, pages, _ = build.render_site()
    read = {page.path: page.figures_read for page in pages}
    for es_path, en_path in PAIRS:
        only_es = sorted(set(read[es_path]) - set(read[en_path]))
        only_en = sorted(set(read[en_path]) - set(read[es_path]))
        assert not only_es and not only_en, \
            f"{en_path}: figures quoted only in Spanish {only_es}, only in English {only_en}"


def test_every_edition_has_every_page_and_its_notebook(built):
    for spec in build.editions():
        assert (built / spec["out"]).is_file(), spec["out"]
        if spec.get("notebook"):
            assert (built / spec["notebook"]).is_file(), spec["notebook"]
    assert {spec["lang"] for spec in build.editions()} == {"es", "en"}
    assert all(spec["out"].startswith("en/") for spec in build.PAGES_EN)


# Synthetic pages: each check can fail.

def _page(lang, body, alternates=(), switch=()):
    links = "".join(f'<link rel="alternate" hreflang="{l}" href="{h}">' for l, h in alternates)
    switches = "".join(f'<a data-testid="lang-switch" hreflang="{l}" href="{h}">x</a>' for l, h in switch)
    return f'<html lang="{lang}"><head>{links}</head><body><header>{switches}</header><main>{body}</main></body></html>'


def _cell(name, output):
    return (f'<section class="cell" data-cell="{name}"><pre class="cell-source"><code>x</code></pre>'
            f'<div class="cell-output"><p class="out-note">precomputed 1</p>{output}</div></section>')


ES_ALT = (("es", "mascara.html"), ("en", "en/mask.html"))
EN_ALT = (("es", "../mascara.html"), ("en", "mask.html"))


def _pair(es_body, en_body):
    return edition_faults(_page("es", es_body, ES_ALT, [("en", "en/mask.html")]),
                          _page("en", en_body, EN_ALT, [("es", "../mascara.html")]),
                          "mascara.html", "en/mask.html")


def test_numbers_are_read_the_way_each_edition_writes_them():
    assert numbers_in("p = 0,448; 1\u202f488\u202f000 rutas; 4,85·10⁻⁶⁹; −3; 12,3 %", "es") == \
        numbers_in("p = 0.448; 1,488,000 paths; 4.85×10⁻⁶⁹; −3; 12.3%", "en") == \
        ["0.448", "1488000", "4.85e-69", "-3", "12.3"]
    assert numbers_in("tardó 2,16 s y 13 ms", "es") == []
    assert numbers_in(r"\d{1,2} de", "es") == numbers_in(r"\d{1,2} de", "en") == []  # a regex


def test_matching_editions_have_no_fault():
    es = '<h2 id="a">Uno</h2>' + _cell("c", "<pre>masa 0,302 de 1\u202f277</pre>") + \
        '<a href="niveles.html#x">x</a><a href="https://example.org/">y</a>'
    en = '<h2 id="a">One</h2>' + _cell("c", "<pre>mass 0.302 of 1,277</pre>") + \
        '<a href="levels.html#x">x</a><a href="https://example.org/">y</a>'
    assert _pair(es, en) == []


def test_each_difference_is_a_fault():
    es = ('<h2 id="a">Uno</h2>' + _cell("c", "<pre>0,302</pre>")
          + '<fieldset class="quiz-question" id="q"><div data-testid="quiz-option" data-correct="true"></div>'
          '<div data-testid="quiz-option"></div></fieldset><figure><svg><text>0,5</text></svg></figure>'
          '<a href="niveles.html">n</a>')
    en = ('<h2 id="b">One</h2>' + _cell("c", "<pre>0.303</pre>")
          + '<fieldset class="quiz-question" id="q"><div data-testid="quiz-option"></div>'
          '<div data-testid="quiz-option" data-correct="true"></div></fieldset><figure><svg><text>0.6</text></svg></figure>'
          '<a href="pitfalls.html">n</a>')
    faults = _pair(es, en)
    assert [f.split(" ")[0] for f in faults] == ["sections", "cell", "quizzes", "picture", "links"]
    missing_switch = edition_faults(_page("es", "", ES_ALT), _page("en", "", EN_ALT),
                                    "mascara.html", "en/mask.html")
    assert any("language switch" in f for f in missing_switch)
    assert any("<html lang>" in f for f in edition_faults(_page("es", ""), _page("es", ""),
                                                          "mascara.html", "en/mask.html"))


def test_figure_reads_are_recorded_with_languages_folded():
    fig = render.TrackedFigures({"a": 1, "pic": {"es": "<svg/>", "en": "<svg/>"}, "t": {"rows": [1]}})
    assert fig["a"] == 1 and fig["pic"]["en"] and fig["t"]["rows"] == [1] and fig.get("zz") is None
    assert fig.read == {"a", "pic", "t", "t.rows"}
