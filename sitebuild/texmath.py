"""Find TeX formulas in rendered HTML and replace them with MathML typeset by KaTeX.

Authors write ``\\( ... \\)`` for inline math and ``\\[ ... \\]`` for display math in
template prose. Delimiters inside ``<pre>``, ``<code>``, ``<script>``, ``<textarea>``,
``<style>``, comments and tag attributes are left alone. The TeX is HTML-unescaped first,
so ``&lt;`` and a raw ``<`` both mean "less than".

KaTeX runs in one ``node`` process for all formulas missing from the cache
(``katex-mathml.js`` beside this module); results are cached in a JSON file named after KaTeX's
version, keyed by display mode and TeX.
"""
from __future__ import annotations

import html
import json
import os
import re
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from .languages import language_of
from .errors import BuildError
from .files import Asset

SCRIPT = Path(__file__).resolve().parent / "katex-mathml.js"
RAW_ELEMENTS = "pre|code|script|textarea|style"
_ATTRS = r"""(?:"[^"]*"|'[^']*'|[^'">])*"""
# Alternatives are tried left to right at each position: skipped regions first, then math.
_SCANNER = re.compile(
    rf"(?P<comment><!--.*?-->)"
    rf"|(?P<raw><(?P<name>{RAW_ELEMENTS})\b{_ATTRS}>.*?</(?P=name)\s*>)"
    rf"|(?P<tag></?[A-Za-z!]{_ATTRS}>)"
    r"|\\\((?P<inline>.+?)\\\)"
    r"|\\\[(?P<display>.+?)\\\]",
    re.DOTALL | re.IGNORECASE)


class MathError(Exception):
    """KaTeX refused a formula (``tex``) or could not run; ``str`` says why."""

    def __init__(self, message: str, tex: str = ""):
        super().__init__(message)
        self.tex = tex


@dataclass(frozen=True)
class Formula:
    """One formula in a page: ``html[start:end]`` is its source, delimiters included."""
    start: int
    end: int
    tex: str
    display: bool

    @property
    def key(self) -> str:
        return ("display:" if self.display else "inline:") + self.tex


def find_formulas(page: str) -> list[Formula]:
    """Every ``\\(...\\)`` and ``\\[...\\]`` of ``page`` outside skipped regions, in order."""
    found = []
    for match in _SCANNER.finditer(page):
        kind = next((k for k in ("inline", "display") if match.group(k) is not None), None)
        if kind:
            tex = html.unescape(match.group(kind)).strip()
            found.append(Formula(match.start(), match.end(), tex, kind == "display"))
    return found


def katex_version(node_modules: Path) -> str:
    """The installed KaTeX version; MathError when ``npm ci`` has not installed it."""
    meta = node_modules / "katex" / "package.json"
    if not meta.exists():
        raise MathError(f"{meta.parent} is missing: run `npm ci` (package.json lists katex).")
    return json.loads(meta.read_text())["version"]


def run_katex(formulas: list[Formula], node_modules: Path) -> list[dict]:
    """Typeset ``formulas`` in one node process: ``[{"mathml": ...} | {"error": ...}]``."""
    request = json.dumps([{"tex": f.tex, "display": f.display} for f in formulas])
    try:
        result = subprocess.run(["node", str(SCRIPT)], input=request.encode(),
                                capture_output=True,
                                env={**os.environ, "NODE_PATH": str(node_modules)})
    except FileNotFoundError:
        raise MathError("`node` is not installed: the build needs it to typeset math.") from None
    if result.returncode != 0:
        raise MathError("KaTeX failed:\n" + result.stderr.decode(errors="replace"))
    return json.loads(result.stdout)


def typeset_all(formulas: list[Formula], node_modules: Path, cache: Path) -> dict[str, str]:
    """MathML for every formula, by ``Formula.key``; node runs only for uncached ones.

    Raises MathError (with ``tex``) for the first formula KaTeX refuses; nothing of a
    failed run is cached.
    """
    if not formulas:
        return {}
    cache_file = cache / f"katex-{katex_version(node_modules)}.json"
    known = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    missing = list({f.key: f for f in formulas if f.key not in known}.values())
    if missing:
        for formula, answer in zip(missing, run_katex(missing, node_modules)):
            if "error" in answer:
                raise MathError(answer["error"], formula.tex)
            known[formula.key] = answer["mathml"]
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(".part")
        tmp.write_text(json.dumps(known, ensure_ascii=False, sort_keys=True))
        tmp.replace(cache_file)
    return {f.key: known[f.key] for f in formulas}


FORMULA_LABEL = {"es": "fórmula", "en": "formula"}  # a display formula's group, read aloud


def replace_formulas(page: str, formulas: list[Formula], mathml: dict[str, str],
                     language: str = "es") -> str:
    """``page`` with each formula replaced by its MathML; display math gets a block wrapper
    (a ``span``, valid inside a paragraph, labelled in the page's ``language``) that centres it
    and scrolls when too wide."""
    parts, last = [], 0
    for formula in formulas:
        parts.append(page[last:formula.start])
        markup = mathml[formula.key]
        if formula.display:
            # focusable, so a formula wider than a narrow screen can be scrolled with the keys
            markup = f'<span class="math-display" tabindex="0" role="group" aria-label="{FORMULA_LABEL[language]}">{markup}</span>'
        parts.append(markup)
        last = formula.end
    parts.append(page[last:])
    return "".join(parts)


def typeset_math(pages: list[Asset], root: Path) -> list[Asset]:
    """Replace the TeX formulas of rendered pages with MathML (see above).

    Each page is returned as a copy of the same type (a ``Page`` keeps its outline).

    Node runs once for all formulas of all pages not yet in ``root/.cache``. Raises
    BuildError naming the page, the TeX and KaTeX's message when a formula is refused.
    """
    found = {page.path: find_formulas(page.data.decode()) for page in pages}
    try:
        mathml = typeset_all([f for fs in found.values() for f in fs],
                                     root / "node_modules", root / ".cache")
    except MathError as error:
        if not error.tex:
            raise BuildError(str(error)) from None
        page = next(path for path, fs in found.items() if error.tex in [f.tex for f in fs])
        raise BuildError(f"{page}: cannot typeset the formula `{error.tex}`: {error}") from None
    return [replace(page, data=replace_formulas(
                page.data.decode(), found[page.path], mathml, language_of(page.path)).encode())
            for page in pages]
