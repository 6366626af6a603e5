"""The prose against the cells' precomputed outputs, on every built page.

- A number of the prose that quotes a cell (``{{ x | es_decimal(3) | cites("name") }}``, a
  ``<span data-cites="name">``) must appear in the precomputed output of the cell ``name``.
- Every precomputed output writes numbers with a decimal comma, except a cell marked
  ``python_numbers=true`` (NumPy arrays and reprs as Python prints them, which its page says).

The checks are functions of one page's HTML, so the synthetic pages below show that they can fail.
"""
from __future__ import annotations

import re
import unicodedata
from html import unescape
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path


import build
from sitebuild import render

# A number written with a decimal point: 0.2, 3.14, 1.5e-10 (not a version such as 0.12.0, not
# part of a word or a file name such as py/lesson/x.py, and not ... ).
DECIMAL_POINT = re.compile(r"(?<![\w.])\d+\.\d+(?:e[-+]?\d+)?(?![\w.])")
# Text the decimal-comma rule does not read: source code, token boxes (a token's bytes as the
# model's vocabulary has them) and tracebacks.
SKIP_CLASSES = {"tok", "tok-byte", "out-error", "cell-source"}
SKIP_TAGS = {"code", "script", "style", "template"}
# In the prose, also preformatted text and the TeX source KaTeX keeps beside its MathML.
PROSE_SKIP_TAGS = SKIP_TAGS | {"pre", "annotation", "kbd"}
# Names that are written with a point in any language: a licence, an arXiv id, a software version.
NAMED_NUMBER = re.compile(r"(?:CC BY(?:-SA)? |arXiv:|versión |version )$")


@dataclass
class Cell:
    name: str
    python_numbers: bool
    output: list[str] = field(default_factory=list)  # the output's text, tokens and code included
    prose_numbers: list[str] = field(default_factory=list)  # the output's text the rule reads


@dataclass
class PageText:
    cells: list[Cell] = field(default_factory=list)
    cites: list[tuple[str, str]] = field(default_factory=list)  # (cell name, text)
    prose: list[str] = field(default_factory=list)  # text outside the cells, code and token boxes


class _Reader(HTMLParser):
    """Collects each cell's output text and each ``data-cites`` span of one page."""

    VOID = {"br", "img", "input", "meta", "link", "hr", "wbr", "source", "col", "area", "base"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = PageText()
        self.stack: list[tuple[str, set[str], dict]] = []
        self.cite: list[str] | None = None
        self.cite_depth = 0

    def handle_starttag(self, tag, attrs):
        a = {k: (v or "") for k, v in attrs}
        if tag in self.VOID:
            return
        classes = set(a.get("class", "").split())
        if tag == "section" and "cell" in classes:
            self.page.cells.append(Cell(a.get("data-cell", ""), a.get("data-python-numbers") == "true"))
        self.stack.append((tag, classes, a))
        if "data-cites" in a and self.cite is None:
            self.cite, self.cite_name, self.cite_depth = [], a["data-cites"], len(self.stack)

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        while self.stack:
            if self.cite is not None and len(self.stack) == self.cite_depth:
                self.page.cites.append((self.cite_name, "".join(self.cite)))
                self.cite = None
            if self.stack.pop()[0] == tag:
                break

    def _in(self, cls: str) -> bool:
        return any(cls in classes for _, classes, _ in self.stack)

    def handle_data(self, data):
        if self.cite is not None:
            self.cite.append(data)
        if not self._in("cell") and not any(
                tag in PROSE_SKIP_TAGS or classes & SKIP_CLASSES for tag, classes, _ in self.stack):
            self.page.prose.append(data)
        if not self._in("cell-output") or not self.page.cells:
            return
        cell = self.page.cells[-1]
        cell.output.append(data)
        if not any(tag in SKIP_TAGS or classes & SKIP_CLASSES for tag, classes, _ in self.stack):
            cell.prose_numbers.append(data)


def read_page(html: str) -> PageText:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader.page


def _plain(text: str) -> str:
    """Spaces of every kind as one space (the prose and the views use thin and no-break spaces)."""
    text = unicodedata.normalize("NFKC", text).replace("\u2212", "-")
    return re.sub(r"\s+", " ", text).strip()


def cite_faults(html: str) -> list[str]:
    """Each cited prose number that its cell's precomputed output does not print, as a sentence."""
    page = read_page(html)
    outputs = {c.name: _plain("".join(c.output)) for c in page.cells if c.name}
    faults = []
    for name, text in page.cites:
        if name not in outputs:
            faults.append(f"«{text}» cites a cell named {name!r}, and no cell has that name")
        elif _plain(text) not in outputs[name]:
            faults.append(f"«{text}» is not in the output of the cell {name!r}")
    return faults


def decimal_point_faults(html: str) -> list[str]:
    """Each number written with a decimal point in a cell output not marked python_numbers."""
    faults = []
    for number, cell in enumerate(read_page(html).cells, 1):
        if cell.python_numbers:
            continue
        for match in DECIMAL_POINT.finditer(" ".join(cell.prose_numbers)):  # one text per element
            faults.append(f"cell {number} ({cell.name or 'unnamed'}) prints {match.group()}")
    return faults


def prose_decimal_point_faults(html: str) -> list[str]:
    """Each number written with a decimal point in the prose (math included), but for names
    (NAMED_NUMBER: «CC BY 4.0», «arXiv:2306.03081», «versión 0.12»)."""
    text = " ".join(read_page(html).prose)
    return [f"the prose writes {m.group()} in «…{_plain(text[max(0, m.start() - 40):m.end()])}»"
            for m in DECIMAL_POINT.finditer(text) if not NAMED_NUMBER.search(text[:m.start()])]


def _cell(name: str, output: str, python_numbers: bool = False) -> str:
    flag = ' data-python-numbers="true"' if python_numbers else ""
    return (f'<section class="cell" data-testid="cell" data-cell="{name}"{flag}>'
            f'<pre class="cell-source"><code>x = 0.5</code></pre>'
            f'<div class="cell-output" data-precomputed="true">{output}</div></section>')


def test_a_cited_number_must_be_in_its_cells_output():
    html = _cell("pesos", '<pre class="out-stdout">masa conservada 0,302\n</pre>')
    good = html + '<p>Solo <span class="cites" data-cites="pesos">0,302</span> pasa.</p>'
    assert cite_faults(good) == []
    wrong = html + '<p>Solo <span class="cites" data-cites="pesos">0,303</span> pasa.</p>'
    assert cite_faults(wrong) == ["«0,303» is not in the output of the cell 'pesos'"]
    missing = html + '<p><span class="cites" data-cites="otra">0,302</span></p>'
    assert "no cell has that name" in cite_faults(missing)[0]


def test_spaces_of_any_kind_match_and_nested_markup_is_read():
    html = (_cell("t", '<table><tr><td>1\u202f277 posiciones</td></tr></table>')
            + '<p><span class="cites" data-cites="t"><strong>1 277</strong> posiciones</span></p>')
    assert cite_faults(html) == []


def test_a_decimal_point_in_an_output_is_a_fault_unless_the_cell_says_python_numbers():
    assert decimal_point_faults(_cell("a", '<pre class="out-stdout">umbral 0.2\n</pre>')) == [
        "cell 1 (a) prints 0.2"]
    assert decimal_point_faults(_cell("a", '<pre class="out-text">array([0.1, 0.5])</pre>',
                                      python_numbers=True)) == []
    fine = ('<pre class="out-stdout">q = 0,710; versión 0.12.0; py/lesson/smc.py; 1.234 tokens?</pre>'
            '<span class="tok">3.5</span><pre class="out-error">File "x.py", line 3.2</pre>')
    assert decimal_point_faults(_cell("a", fine)) == ["cell 1 (a) prints 1.234"]


def test_a_decimal_point_in_the_prose_is_a_fault_but_a_version_or_a_licence_is_not():
    html = ('<p>umbral 0.2, con licencia CC BY 4.0, arXiv:2306.03081, la versión 0.12 y q = 0,71</p>'
            '<p><code>x = 0.5</code><math><mn>0.99</mn><annotation>0.99^{200}</annotation></math></p>')
    faults = prose_decimal_point_faults(html)
    assert [f.split(" in ")[0] for f in faults] == ["the prose writes 0.2", "the prose writes 0.99"]


def _lessons(built: Path, pages=None):
    return [(spec["out"], (built / spec["out"]).read_text(encoding="utf-8"))
            for spec in (build.PAGES if pages is None else pages) if render.is_lesson(spec)]


# The English edition writes a decimal point, and a comma only between groups of three digits:
# "0,448" or "1,5" is a Spanish decimal comma, and so is a power of ten written "·10".
COMMA_NUMBER = re.compile(r"(?<![\w.,{])\d+(?:,\d+)+(?![\w])|\d·10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]")
THOUSANDS = re.compile(r"[1-9]\d{0,2}(?:,\d{3})+")


def _spanish_numbers(text: str):
    return [m for m in COMMA_NUMBER.finditer(text) if not THOUSANDS.fullmatch(m.group())]


def decimal_comma_faults(html: str) -> list[str]:
    """Each number written the Spanish way in a cell output of an English page."""
    faults = []
    for number, cell in enumerate(read_page(html).cells, 1):
        for match in _spanish_numbers(" ".join(cell.prose_numbers)):
            faults.append(f"cell {number} ({cell.name or 'unnamed'}) prints {match.group()}")
    return faults


def prose_decimal_comma_faults(html: str) -> list[str]:
    """Each number written the Spanish way in the prose of an English page (math included)."""
    text = " ".join(read_page(html).prose)
    return [f"the prose writes {m.group()} in «…{_plain(text[max(0, m.start() - 40):m.end()])}»"
            for m in _spanish_numbers(text)]


def test_a_spanish_number_on_an_english_page_is_a_fault():
    assert decimal_comma_faults(_cell("a", '<pre class="out-stdout">p 0,448 of 1,488,000; 4,85·10⁻⁶⁹; [1, 2]</pre>')) == [
        "cell 1 (a) prints 0,448", "cell 1 (a) prints 4,85"]
    assert decimal_comma_faults(_cell("a", "<pre>4·10⁻³</pre>")) == ["cell 1 (a) prints 4·10⁻"]
    assert decimal_comma_faults(_cell("a", r"<pre>\d{1,2}</pre>")) == []  # a regex quantifier
    assert [f.split(" in ")[0] for f in prose_decimal_comma_faults("<p>12,5 and 1,234 and f(1,2)</p>")] == [
        "the prose writes 12,5", "the prose writes 1,2"]


def test_every_cited_prose_number_is_printed_by_its_cell(built):
    faults = [f"{name}: {fault}" for name, html in _lessons(built, build.editions())
              for fault in cite_faults(html)]
    assert not faults, "\n".join(faults)


def test_every_english_output_and_prose_writes_english_numbers(built):
    faults = [f"{name}: {fault}" for name, html in _lessons(built, build.PAGES_EN)
              for fault in decimal_comma_faults(html)]
    faults += [f"{spec['out']}: {fault}" for spec in build.PAGES_EN
               for fault in prose_decimal_comma_faults((built / spec["out"]).read_text(encoding="utf-8"))]
    assert not faults, "\n".join(faults)


def test_every_precomputed_output_writes_decimal_commas(built):
    faults = [f"{name}: {fault}" for name, html in _lessons(built)
              for fault in decimal_point_faults(html)]
    assert not faults, "\n".join(faults)


def test_the_prose_of_every_page_writes_decimal_commas(built):
    pages = [(spec["out"], (built / spec["out"]).read_text(encoding="utf-8")) for spec in build.PAGES]
    faults = [f"{name}: {fault}" for name, html in pages for fault in prose_decimal_point_faults(html)]
    assert not faults, "\n".join(faults)


def test_every_named_cell_name_is_unique_in_its_page(built):
    for name, html in _lessons(built, build.editions()):
        names = [c.name for c in read_page(html).cells if c.name]
        assert len(names) == len(set(names)), f"{name}: a cell name appears twice"


def glued_sentences(html: str) -> list[str]:
    """Each place in a paragraph of the prose where a sentence ends and the next begins with no
    space between them («…no.La celda»): a template join that lost its space. Cells, code and
    math are left out."""
    html = re.sub(r'<section class="cell".*?</section>', " ", html, flags=re.S)
    faults = []
    for paragraph in re.findall(r"<p\b[^>]*>(.*?)</p>", html, flags=re.S):
        paragraph = re.sub(r"<(code|math|script|style)[^>]*>.*?</\1>", " ", paragraph, flags=re.S)
        text = _plain(unescape(re.sub(r"<[^>]+>", "", paragraph)))
        faults += [text[max(0, m.start() - 30):m.end() + 20]
                   for m in re.finditer(r"[a-záéíóúñü0-9)»”][.;?!][A-ZÁÉÍÓÚÑ¿“«]", text)]
    return faults


def test_a_glued_sentence_is_found():
    assert glued_sentences("<p>con 0,2, no.La celda agrupa</p>") == ["con 0,2, no.La celda agrupa"]
    assert glued_sentences("<p>con 0,2, no. La celda</p><p><code>a.B</code></p>") == []


def test_no_paragraph_glues_two_sentences(built):
    pages = sorted(built.glob("*.html")) + sorted(built.glob("en/*.html"))
    faults = {p.name: glued_sentences(p.read_text(encoding="utf-8")) for p in pages}
    assert not {k: v for k, v in faults.items() if v}, faults
