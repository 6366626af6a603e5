"""Rendering the pages: the Jinja environment (filters, the outline its macros record), the course
map's entries and the reading time of a lesson."""
from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path

import jinja2
import markupsafe  # installed with jinja2

from .devserver import CONTENT_SECURITY_POLICY
from .files import TEMPLATES, Page, SitePlan, has_model, use_py
from .offline import BUILD_PLACEHOLDER, SERVICE_WORKER
from .languages import alternates, gettext_for, language_of, script_messages, up_to_root

class PageOutline:
    """The parts of a page that its notebook repeats, recorded by the macros while the page renders.

    ``make_env`` makes one the template global ``outline``: in ``macros.html``, the ``heading`` macro
    calls ``outline.heading(level, text)`` and the ``cell`` macro calls ``outline.cell(source)`` with
    the cell's dedented source, exactly as the reader's editor gets it. Jinja runs a template in page
    order (a template that captures a cell with ``{% set %}`` to place it later would break that), so
    ``items`` lists ``("h2", text)``, ``("h3", text)``, ... and ``("code", source)`` in the order the
    page shows them. ``take`` returns them and starts over for the next page.
    """

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def heading(self, level: int, text: str) -> str:
        """Record a heading; return its default id, ``sec-N`` for the page's N-th heading."""
        self.items.append((f"h{int(level)}", str(text)))
        return f"sec-{sum(1 for kind, _ in self.items if kind != 'code')}"

    def cell(self, source: str) -> None:
        self.items.append(("code", str(source)))

    def take(self) -> list[tuple[str, str]]:
        items, self.items = self.items, []
        return items


def dedent_code(text: str) -> str:
    """Jinja2 filter: strip the template's indentation from a cell's source."""
    return str(textwrap.dedent(str(text)).strip("\n"))  # plain str: autoescaped


def token_box(token: str | dict, partial: bool | None = None) -> markupsafe.Markup:
    """Jinja2 filter ``token``: a token label in the site's token box, ``<span class="tok">…</span>``.

    ``token`` is a label string (``lesson.token_label`` of the token's bytes) or a figure's dict with
    ``label`` and, optionally, ``partial``. ``partial=True`` (else the dict's flag) marks a token that
    holds only part of a UTF-8 character: class ``tok-byte``. The label is HTML-escaped.
    """
    if isinstance(token, dict):
        label = token["label"]
        partial = token.get("partial", False) if partial is None else partial
    else:
        label = token
    classes = "tok tok-byte" if partial else "tok"
    return markupsafe.Markup('<span class="{}">{}</span>').format(classes, label)


def cites(text, cell: str) -> markupsafe.Markup:
    """Jinja2 filter ``cites``: a number of the prose that quotes the output of the cell named
    ``cell`` (``cell(name=...)`` in ``macros.html``), as ``<span class="cites" data-cites="…">``.

    ``{{ fig.kept | es_decimal(3) | cites("pesos") }}``. The site's tests find, for each such span,
    the same text in the precomputed output of the named cell, so a prose number that stops being
    what its cell prints fails the tests. ``text`` is escaped unless it is already Markup.
    """
    return markupsafe.Markup('<span class="cites" data-cites="{}">{}</span>').format(cell, text)


class TrackedFigures(dict):
    """A page's figures (``fig``) that remember which entries the page's template read.

    ``read`` (shared by the nested dicts) collects dotted paths such as ``"enumeration.rows"``;
    a figure stored in both languages (``{"es": ..., "en": ...}``, ``lesson.i18n.each_language``)
    counts as the entry above its language, so the two editions of a page, which must quote the
    same entries, record the same paths (``tests/site/test_editions.py``). Values in lists are
    not followed."""

    def __init__(self, data: dict, read: set | None = None, path: str = ""):
        super().__init__(data)
        self.read = set() if read is None else read
        self.path = path

    def _wrap(self, key, value):
        is_language = key in ("es", "en") and set(self) <= {"es", "en"}
        path = self.path if is_language else (f"{self.path}.{key}" if self.path else str(key))
        if path:
            self.read.add(path)
        return TrackedFigures(value, self.read, path) if isinstance(value, dict) else value

    def __getitem__(self, key):
        return self._wrap(key, super().__getitem__(key))

    def get(self, key, default=None):
        return self[key] if key in self else default


def make_env(templates: Path = TEMPLATES) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates)),
                             autoescape=jinja2.select_autoescape(["html"]),
                             undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True,
                             extensions=["jinja2.ext.do",  # {% do outline.cell(...) %}
                                         "jinja2.ext.i18n"])  # _() in the shared templates
    env.install_gettext_callables(*gettext_for("es"), newstyle=True)  # render_pages sets each page's
    env.globals["outline"] = PageOutline()
    env.filters["dedent"] = dedent_code
    env.filters["token"] = token_box
    env.filters["cites"] = cites
    use_py(templates.parent)
    from lesson import numbers  # the same number formats as the page's cells
    for name in ("decimal", "sci", "prob", "int", "percent"):  # es_* and en_*, one per edition
        env.filters["es_" + name] = getattr(numbers, "es_" + name)
        env.filters["en_" + name] = getattr(numbers, "en_" + name)
    env.filters["tex"] = lambda text: str(text).replace(",", "{,}")  # a decimal comma inside TeX
    env.filters["sig"] = round_significant  # «unas 12 000 veces»: as many figures as the word «unas» claims
    return env


def round_significant(x: float, figures: int = 2) -> float:
    """Jinja2 filter ``sig``: ``x`` rounded to ``figures`` significant figures (0 stays 0), for a
    number the prose gives as approximate (``{{ r | sig | int | es_int }}`` writes 11 994 as 12 000)."""
    if x == 0:
        return 0.0
    return round(x, figures - 1 - math.floor(math.log10(abs(x))))


def lab_presets() -> dict:
    """The «Laboratorio»'s presets (``lesson.laboratorio.PRESETS``), for its page's form."""
    from lesson.laboratorio import PRESETS
    return PRESETS


def lab_limits() -> dict:
    """The «Laboratorio»'s limits its legend quotes: the token paths and model positions it
    enumerates at most."""
    from lesson.laboratorio.exact import MAX_PATHS, MAX_POSITIONS
    return {"exact_paths": MAX_PATHS, "exact_positions": MAX_POSITIONS}


def lab_vocabularies() -> dict:
    """The «Laboratorio»'s «vocabulario» menu: the mini-GPT's token count (``GPTConfig``'s
    ``vocab_size``) and each real vocabulary's name and token count (``vocabularies.load``)."""
    from minigpt.config import GPTConfig
    from vocabularies import NAMES, load
    return {"minigpt": GPTConfig().vocab_size, "real": [{"name": n, "tokens": len(load(n).tokens)} for n in NAMES]}


def is_lesson(spec: dict) -> bool:
    """Every entry of the page table (``build.PAGES``) but the course map (``index.html``) and the tools (``"tool": True``,
    the «Laboratorio») is a lesson of the course."""
    return Path(spec["out"]).name != "index.html" and not spec.get("tool")


READING_WORDS_PER_MINUTE = 150  # prose with formulas, read closely
MINUTES_PER_CELL = 1.5          # read the code, run it, look at the output
MINUTES_PER_QUESTION = 1


def lesson_minutes(html: str) -> int:
    """The time a lesson takes, from its rendered page: its prose's words at
    ``READING_WORDS_PER_MINUTE``, plus ``MINUTES_PER_CELL`` per cell and ``MINUTES_PER_QUESTION``
    per quiz question, rounded up to 5 minutes. Cell sources, formulas and scripts are not prose.
    """
    main = html[html.find("<main"):html.rfind("</main>")]
    cells = main.count('data-testid="cell"')
    questions = main.count('data-testid="quiz-question"')
    prose = re.sub(r"<(pre|math|script|style|template)\b.*?</\1>", " ", main, flags=re.S)
    words = len(re.sub(r"<[^>]+>", " ", prose).split())
    minutes = (words / READING_WORDS_PER_MINUTE + MINUTES_PER_CELL * cells
               + MINUTES_PER_QUESTION * questions)
    return 5 * max(1, math.ceil(minutes / 5))


def course_entries(pages, rendered: dict[str, Page]) -> list[dict]:
    """The lessons of ``pages`` (one edition of the page table, ``build.PAGES`` or
    ``build.PAGES_EN``) in order, as the course map and the lesson links need them:
    ``number``, ``out``, ``href`` (the file name: a link from a page of the same edition),
    ``title``, ``summary``, and, for lessons already in ``rendered`` (by
    ``out``), ``minutes`` (``lesson_minutes``, unless the entry sets it) and ``cells``."""
    entries = []
    for number, spec in enumerate([p for p in pages if is_lesson(p)], start=1):
        entry = {"number": number, "out": spec["out"], "href": Path(spec["out"]).name,
                 "title": spec["title"], "summary": spec.get("summary", "")}
        page = rendered.get(spec["out"])
        if page is not None:
            entry["minutes"] = spec.get("minutes") or lesson_minutes(page.data.decode())
            entry["cells"] = sum(1 for kind, _ in page.outline if kind == "code")
        entries.append(entry)
    return entries


# After Stop, how long Python may take to stop by itself before the page restarts it (Python
# checks for the interrupt between bytecodes, not inside a long call into C code). The page
# script reads it from the runtime config, and «Python en el navegador» quotes it.
STOP_GRACE_MS = 3000


def runtime_config(plan: SitePlan, prefix: str = "", language: str = "es",
                   vocabularies: bool = False) -> dict:
    """What the page script and the worker need to start Python (``<script id="runtime-config">``):
    the URLs of the worker, the runtime, the project code and the weights, each relative to the
    page (``prefix``: ``"../"`` from ``site/en/``), the page's ``language`` for the kernel, and
    ``stopGraceMs`` (``STOP_GRACE_MS``). ``vocabularies``: the page's cells may load a real
    tokenizer's vocabulary, so the config lists those files (fetched only when a cell asks:
    ``vocabularies.load``); an empty list otherwise."""
    urls = plan.urls
    return {
        "worker": prefix + urls["worker_js"], "pyodideIndex": prefix + urls["pyodide_index"],
        "pyodideScript": prefix + urls["pyodide.js"],
        "weights": [{**w, "url": prefix + w["url"]} for w in plan.weights],
        "vocabularies": [{**v, "url": prefix + v["url"]} for v in plan.vocabularies]
        if vocabularies else [],
        "early": prefix + urls["early_js"] if urls.get("early_js") else None,  # None: the page script starts the worker
        "code": [{"name": name, "url": prefix + urls[key], "size": plan.sizes.get(key, 0)}
                 for name, key in (("py.zip", "py_zip"), ("kernel.py", "kernel_py"))],
        "lang": language,
        "stopGraceMs": STOP_GRACE_MS,
    }


def render_pages(plan: SitePlan, env: jinja2.Environment, pages) -> list[Page]:
    """Render every page of ``pages`` (the page table of both editions, ``build.EDITIONS``) with
    the asset URLs and the runtime config, each edition in its language.

    Each page comes with the outline its macros recorded (``env`` is made by ``make_env``) and the
    figure entries its template read (``Page.figures_read``). Within an edition the lessons render
    first, each with ``course`` (that edition's lessons in order, for its previous and next
    links); then the course map, whose ``course`` also has each lesson's minutes and cells. A
    page in a folder (``en/mask.html``) gets every URL relative to itself. ``_()`` in a template
    is the page's language (Jinja2's i18n extension over ``lesson.i18n``'s catalogs).
    """
    names = [w["name"] for w in plan.weights]
    context = {"pages": pages, "has_model": has_model(names),
               "has_tokenizer": "merges.txt" in names, "weight_names": names,
               "csp": CONTENT_SECURITY_POLICY, "lab_presets": lab_presets(),
               "lab_limits": lab_limits(), "lab_vocabularies": lab_vocabularies()}
    outline = env.globals["outline"]
    rendered: dict[str, Page] = {}
    for language in ("es", "en"):
        edition = [p for p in pages if p.get("lang", "es") == language]
        env.install_gettext_callables(*gettext_for(language), newstyle=True)
        if env.cache is not None:  # an imported template (macros.html) keeps the _() it was loaded with
            env.cache.clear()
        messages = script_messages(language)
        for page in sorted(edition, key=lambda spec: not is_lesson(spec)):  # lessons first
            outline.take()  # nothing left over from a render that raised
            prefix = up_to_root(page["out"])
            figures = (plan.figures or {}).get(page.get("source", page["out"]))  # None: no weights, or no figures module
            fig = TrackedFigures(figures) if isinstance(figures, dict) else figures
            tools = [dict(t, href=Path(t["out"]).name) for t in edition if t.get("tool")]
            html = env.get_template(page["template"]).render(
                page=page, course=course_entries(edition, rendered), fig=fig, lang=language,
                urls={key: prefix + url for key, url in plan.urls.items()},
                runtime_config=runtime_config(plan, prefix, language,
                                              bool(page.get("vocabularies"))),
                alternates=alternates(page, pages), script_messages=messages, tools=tools,
                sw_url=prefix + SERVICE_WORKER, build=BUILD_PLACEHOLDER,
                **context)
            rendered[page["out"]] = Page(page["out"], html.encode(), outline.take(),
                                         sorted(fig.read) if isinstance(fig, TrackedFigures) else [])
    return [rendered[page["out"]] for page in pages]
