"""HTML views of the lesson's results: token strips, samples, the per-position picture and the
enumeration table. Plain HTML with the site's CSS classes, returned by ``_repr_html_``, so the same
objects render in a page cell, at build time and in Jupyter.

Test hooks (stable): ``[data-testid=masked-sample]`` / ``[data-testid=unmasked-sample]`` hold exactly
the generated text; ``[data-testid=enumeration-table]`` has one row per text with ``data-text``,
``data-conditional`` and ``data-masked`` (Python ``repr`` of the float); ``[data-testid=p-grammar]``
carries p(G | x) in ``data-value``.

Language: a view writes in the current language of :mod:`lesson.i18n` when it renders. Its words
are Spanish message ids wrapped in ``_()`` / ``ngettext()`` (never inside an f-string: Babel must
see the literal), translated in ``locale/en/LC_MESSAGES/lesson.po``; its numbers go through the
``fmt_*`` functions of :mod:`lesson.numbers` («0,448» / "0.448"); word tables such as
``KIND_NAMES`` are :class:`Translated` mappings, looked up at each use. The Spanish output is the
one the Spanish edition has always printed.
"""

from __future__ import annotations

import hashlib
import json
import math
from html import escape
from pathlib import Path

import numpy as np

from collections.abc import Mapping

from .i18n import _, get_language, ngettext
from .numbers import (SECONDS_PER_YEAR, en_int, es_int, fmt_decimal, fmt_int, fmt_prob, fmt_sci,
                      fmt_sci_log)

_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}
_CSS: list[str] = []  # views.css, read once


def styled(html: str) -> str:
    """A view's HTML with the views' stylesheet in front, so it renders alike in a page and in Jupyter."""
    if not _CSS:
        _CSS.append((Path(__file__).with_name("views.css")).read_text(encoding="utf-8"))
    return f'<div class="lesson-view"><style>{_CSS[0]}</style>{html}</div>'


def counted(message: str, n: int) -> str:
    """``message`` (an ``ngettext`` result with ``{n}`` in it) with ``n`` written by
    :func:`~lesson.numbers.fmt_int`: ``counted(ngettext("{n} camino", "{n} caminos", n), n)`` is
    «12 345 caminos» in Spanish and "12,345 paths" in English."""
    return message.format(n=fmt_int(n))


def plain_int(n: int) -> str:
    """An integer the views used to print with ``str`` (seeds, small counts): ``str(n)`` in
    Spanish, unchanged, and :func:`~lesson.numbers.en_int` in English (commas from four digits)."""
    return str(n) if get_language() == "es" else en_int(n)


class Translated(Mapping):
    """A dict of words in the current language: ``make`` returns it with every value wrapped in
    ``_()`` (so Babel finds the ids), and is called at each lookup, so ``KIND_NAMES["regex"]``
    is «expresión regular» on a Spanish page and "regular expression" on an English one."""

    def __init__(self, make):
        self._make = make

    def _now(self) -> dict:
        return self._make()

    def __getitem__(self, key):
        return self._now()[key]

    def __iter__(self):
        return iter(self._now())

    def __len__(self) -> int:
        return len(self._now())

    def __repr__(self) -> str:
        return f"Translated({self._now()!r})"


def token_label(piece: bytes) -> str:
    """A token's bytes as readable text: valid UTF-8 characters as such (space as ␣, newline as ↵,
    tab as ⇥), every other control byte and every byte that is not part of a whole character as <0xC3>."""
    out, i = [], 0
    while i < len(piece):
        for n in (1, 2, 3, 4):
            try:
                char = piece[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            out.append(_VISIBLE.get(char, f"<0x{ord(char):02X}>" if char < " " or char == "\x7f" else char))
            i += n
            break
        else:
            out.append(f"<0x{piece[i]:02X}>")
            i += 1
    return "".join(out)


def is_partial(piece: bytes) -> bool:
    """True when the token's bytes are not whole UTF-8 characters (part of a character)."""
    try:
        piece.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def token_html(vocab: list[bytes], token: int, extra_class: str = "") -> str:
    """One token as a boxed label, with its id in the tooltip; partial UTF-8 bytes get class tok-byte."""
    piece = vocab[token]
    classes = " ".join(c for c in ("tok", "tok-byte" if is_partial(piece) else "", extra_class) if c)
    return f'<span class="{classes}" title="token {token}">{escape(token_label(piece))}</span>'


def strip_html(vocab: list[bytes], tokens: list[int]) -> str:
    """A token strip: every token of a sequence boxed, so the boundaries show."""
    return ('<span class="tok-strip" role="list" aria-label="tokens">'
            + "".join(token_html(vocab, t).replace("<span", '<span role="listitem"', 1) for t in tokens)
            + "</span>")


KIND_NAMES = Translated(lambda: {"choice": _("lista de opciones"), "regex": _("expresión regular"),
                                  "json_schema": "JSON Schema", "cfg": _("gramática GBNF")})


def status_html(gen) -> str:
    """Why a generation stopped, in words: nothing for a complete text; a warning for a budget
    that ran out before the grammar's text was complete."""
    if gen.status == "budget":
        if gen.grammar.accepts(gen.bytes):
            what = _("el texto ya es válido, pero la gramática permitía seguir")
        else:
            what = _("texto incompleto")
        budget = ngettext("{n} token", "{n} tokens", gen.max_tokens).format(n=plain_int(gen.max_tokens))
        words = _("presupuesto agotado ({budget}): {what}").format(budget=budget, what=what)
        return f'<span class="status-budget" data-testid="budget-reached">{words}</span>'
    if gen.status == "stopped":
        words = _("parada en cuanto el texto fue válido")
        return f'<span class="status-note">{words}</span>'
    return ""


def generation_html(gen) -> str:
    """One Generation: the answer (test hook), its token strip, its path probabilities, why it
    stopped and, with a grammar, whether the grammar accepts the text."""
    hook = "masked-sample" if gen.masked else "unmasked-sample"
    kind = (_("con máscara ({kind})").format(kind=KIND_NAMES.get(gen.grammar.kind, gen.grammar.kind))
            if gen.masked else _("sin máscara"))
    probs = f"p(y | x) = {fmt_sci_log(gen.log_p)}"
    if gen.masked:
        probs += " · " + _("q̃(camino)") + f" = {fmt_sci_log(gen.log_q)}"
    verdict = ""
    if gen.masked:
        ok = gen.grammar.accepts(gen.bytes)
        words = _("la gramática lo acepta") if ok else _("la gramática no lo acepta (aún)")
        verdict = (f'<span class="verdict" data-testid="verdict" data-accepted="{str(ok).lower()}">'
                   f'{words}</span>')
    extra = " · ".join(x for x in (status_html(gen), verdict) if x)
    n = len(gen.token_ids)
    caption = " · ".join((kind, _("semilla {seed}").format(seed=plain_int(gen.seed)),
                          _("temperatura {t}").format(t=fmt_decimal(gen.temperature, 1)),
                          ngettext("{n} token", "{n} tokens", n).format(n=plain_int(n)), probs))
    return styled(f'<figure class="generation">'
            f'<figcaption>{caption}{" · " + extra if extra else ""}</figcaption>'
            f'<pre class="answer"><code data-testid="{hook}">{escape(gen.text)}</code></pre>'
            f'{strip_html(gen.vocab, gen.token_ids)}</figure>')


class SampleTable:
    """Several generations in one table: seed, answer (test hook), token strip."""

    def __init__(self, generations, caption: str = ""):
        self.generations = list(generations)
        self.caption = caption

    def _repr_html_(self) -> str:
        rows = []
        for gen in self.generations:
            hook = "masked-sample" if gen.masked else "unmasked-sample"
            extra = "<br><small>" + _("q̃(camino)") + f" = {fmt_sci_log(gen.log_q)}</small>" if gen.masked else ""
            if status_html(gen):
                extra += f"<br><small>{status_html(gen)}</small>"
            rows.append(f'<tr><td>{plain_int(gen.seed)}</td><td><code class="answer" data-testid="{hook}">'
                        f'{escape(gen.text)}</code>{extra}</td>'
                        f'<td>{strip_html(gen.vocab, gen.token_ids)}</td></tr>')
        caption = f"<caption>{escape(self.caption)}</caption>" if self.caption else ""
        return styled(_scroll(_("muestras")) + '<table class="samples">' + caption +
                "<thead><tr>" + _heads([_("semilla"), _("respuesta"), _("tokens")]) + "</tr></thead><tbody>"
                + "".join(rows) + "</tbody></table></div>")


def _heads(labels, quote: str = "'") -> str:
    """Column headers: ``<th scope='col'>label</th>`` for each label (``quote``: the attribute's)."""
    return "".join(f"<th scope={quote}col{quote}>{label}</th>" for label in labels)


def _scroll(label: str) -> str:
    """Opens a horizontally scrollable box for a wide table (focusable, so keys can scroll it)."""
    return f'<div class="table-scroll" tabindex="0" role="region" aria-label="{escape(label)}">'


def _bar(p: float, label: str, chosen: bool = False) -> str:
    """A horizontal bar for a probability with its number beside it (never on the fill)."""
    width = max(0.0, min(1.0, p)) * 100
    cls = "pbar chosen" if chosen else "pbar"
    return (f'<span class="pbar-group"><span class="{cls}" aria-hidden="true"><span class="pbar-fill" '
            f'style="width:{width:.1f}%"></span></span><span class="pbar-text">{label}</span></span>')


def _table_prob(p: float) -> str:
    """Four decimals, or a power of ten below 10^-4 (so no row reads 0,0000)."""
    return fmt_decimal(p, 4) if p >= 1e-4 else fmt_sci(p, 3)


def _ranked(vocab, pairs, chosen: int, limit: int) -> str:
    items = [f'<li>{token_html(vocab, t, "chosen" if t == chosen else "")} '
             f'{_bar(p, fmt_prob(p), t == chosen)}</li>' for t, p in pairs[:limit]]
    if len(pairs) > limit:
        items.append('<li class="more">' + _("y {n} más").format(n=plain_int(len(pairs) - limit)) + "</li>")
    return '<ol class="ranked">' + "".join(items) + "</ol>"


def log_width(p: float, decades: int = 12) -> float:
    """Bar width (0..100) for a probability on a log scale: 1 is full, 10^-decades or less is empty."""
    if not p > 0:
        return 0.0
    return max(0.0, min(100.0, 100 * (1 + math.log10(p) / decades)))


ALL_STATIC = 12  # rows of the whole-vocabulary list written as HTML (all of them with views.js)

FORCED_LABELS = Translated(lambda: {
    "token": _("forzada: un solo token"),
    "split": _("forzada: una sola continuación, que {starts} (solo cambia la partición en tokens)"),
    "fast_forward": _("adelantada: escrita sin muestrear (partición BPE)"),
    None: _("se elige el texto")})


def forced_label(pos) -> str:
    """The words for how a position was forced (FORCED_LABELS); a "split" one says how many
    allowed tokens start its one continuation: «…, que 3 tokens distintos pueden empezar …»."""
    label = FORCED_LABELS[pos.forced]
    if pos.forced == "split":
        label = label.format(starts=starts_words(len(pos.allowed or ())))
    return label


def starts_words(n: int) -> str:
    """How many allowed tokens can start a forced continuation: «3 tokens distintos pueden empezar»
    («1 token puede empezar», never the case at a "split" position, which has two or more)."""
    return ngettext("{n} token puede empezar", "{n} tokens distintos pueden empezar", n).format(n=plain_int(n))


def split_clause(counts: list[int]) -> str:
    """The strip caption's clause for its "split" positions, ``counts`` their numbers of allowed
    tokens: «1 con una sola continuación (que 2 tokens distintos pueden empezar)»; for several,
    «3 con una sola continuación cada una (que de 2 a 4 tokens distintos pueden empezar)» (a range
    when they differ); "" for none."""
    if not counts:
        return ""
    lo, hi = min(counts), max(counts)
    if lo == hi:
        starts = starts_words(lo)
    else:
        starts = ngettext("de {lo} a {hi} token puede empezar", "de {lo} a {hi} tokens distintos pueden empezar",
                          hi).format(lo=plain_int(lo), hi=plain_int(hi))
    return ngettext("{n} con una sola continuación (que {starts})",
                    "{n} con una sola continuación cada una (que {starts})",
                    len(counts)).format(n=plain_int(len(counts)), starts=starts)


def _is_prob(x: float) -> str:
    """«= 0,543», or «> 0,999» for one that would round to 1 (see :func:`~lesson.numbers.es_prob`)."""
    text = fmt_prob(x)
    return text if text.startswith(">") else f"= {text}"


def cut_mark() -> str:
    """The mark of an allowed token that top-k / top-p left out, in the current language."""
    return '<span class="cut-mark">' + _("recortado por top-k / top-p") + "</span>"


def _cut_words(allowed) -> str:
    """«; 1 recortado por top-k / top-p» for the allowed tokens top-k / top-p leave out (q̃ = 0)."""
    cut = sum(1 for _, _, q in allowed if q == 0)
    if not cut:
        return ""
    return "; " + counted(ngettext("{n} recortado por top-k / top-p", "{n} recortados por top-k / top-p", cut), cut)


KEPT_BANDS = (0.5, 0.1, 0.01, 1e-4)  # band 0: p(A_j) >= 0.5; band 1: [0.1, 0.5); ... band 4: < 1e-4


def kept_band(kept_mass: float) -> int:
    """The band of ``KEPT_BANDS`` a kept mass falls in: 0 (at least 0.5) to 4 (below 10⁻⁴)."""
    return next((i for i, low in enumerate(KEPT_BANDS) if kept_mass >= low), len(KEPT_BANDS))


class PositionsView:
    """The per-position picture of one generation, readable at any length.

    A token strip (it wraps) with one entry per position j; choosing one (click, or Tab into the
    strip and the arrow keys: they are radio buttons, no script needed) opens its detail below:
    the model's top tokens before the mask (the ones the mask removes struck out), the allowed
    tokens with p before and q after the mask, the kept mass p(A_j) on a labelled log scale, the
    chosen token and whether the position was forced. The first real choice is open at first
    (or position ``open_at``); ``entry_testid`` adds a data-testid to every strip entry.

    ``kept_shading``: each strip entry is also underlined by its kept mass p(A_j), darker for less
    (``KEPT_BANDS``), with a key under the strip, so the positions where the mask corrected the
    model most stand out without opening them.

    Test hooks: ``[data-testid=positions-view]``; each strip entry has ``data-position`` (1-based)
    and ``data-forced`` ("token", "split" or ""), and with ``kept_shading`` ``data-kept-band`` (0 to
    4, the band of ``KEPT_BANDS``); each panel ``data-panel`` (1-based).
    """

    def __init__(self, gen, top_k: int = 5, uid: str | None = None, open_at: int | None = None,
                 entry_testid: str | None = None, kept_shading: bool = False):
        self.gen, self.top_k, self.uid = gen, top_k, uid
        self.open_at, self.entry_testid = open_at, entry_testid
        self.kept_shading = kept_shading

    def _uid(self) -> str:
        """An id prefix that depends only on the generation (the same view renders the same HTML),
        unless the caller names one (two views of one generation on a page need two names)."""
        if self.uid is not None:
            return self.uid
        gen = self.gen
        key = repr((gen.prompt, gen.token_ids, gen.seed, gen.temperature, gen.top_k, gen.top_p,
                    None if gen.grammar is None else repr(gen.grammar)))
        return "pv" + hashlib.sha1(key.encode()).hexdigest()[:8]

    def _panel(self, j: int, pos) -> str:
        vocab = self.gen.vocab
        allowed = {t for t, _, _ in pos.allowed} if pos.allowed is not None else None
        before = []
        for t, p in pos.top:
            removed = allowed is not None and t not in allowed
            tok = token_html(vocab, t, "chosen" if t == pos.chosen else ("removed" if removed else ""))
            mark = ' <span class="removed-mark">' + _("fuera") + "</span>" if removed else ""
            before.append(f'<li{" class=removed" if removed else ""}>{tok}{mark} '
                          f'{_bar(p, fmt_prob(p), t == pos.chosen)}</li>')
        position, chosen = _("Posición {j}").format(j=j), _("token elegido")
        p_says = escape(_("p: la probabilidad que el modelo da al token, antes de la máscara"), quote=True)
        head = (f'<p class="pv-head"><strong>{position}</strong> · {chosen} '
                f'{token_html(vocab, pos.chosen, "chosen")} · <abbr title="{p_says}">p</abbr> '
                f'{_is_prob(pos.p_chosen)}')
        if pos.allowed is None:
            no_mask, earlier = _("(sin máscara)"), _("antes")
            return (f'{head} {no_mask}</p><div class="pv-cols"><div><h4>{earlier}: '
                    f'p(v | x, y<sub>&lt;j</sub>)</h4><ol class="ranked">{"".join(before)}</ol></div></div>')
        q_says = escape(_("q̃: su probabilidad después de la máscara, renormalizada sobre los tokens permitidos"),
                        quote=True)
        head += (f' · <abbr title="{q_says}">q̃</abbr> {_is_prob(pos.q_chosen)} · '
                 f'<span class="forced-mark{"" if pos.forced else " choice"}">'
                 f'{forced_label(pos)}</span></p>')
        n_allowed = len(pos.allowed)
        allowed_words = counted(ngettext("{n} token permitido", "{n} tokens permitidos", n_allowed), n_allowed)
        kept_mass = _("masa conservada")
        kept_says = escape(_("masa conservada p(A_j): la probabilidad que el modelo daba, antes de la máscara, "
                             "al conjunto permitido A_j"), quote=True)
        kept = (f'<p class="pv-kept"><abbr title="{kept_says}">{kept_mass} p(A<sub>{j}</sub>)</abbr> = '
                f'<strong>{fmt_prob(pos.kept_mass)}</strong> '
                f'<span class="logaxis"><span class="logbar" aria-hidden="true"><span class="pbar-fill" '
                f'style="width:{log_width(pos.kept_mass):.1f}%"></span></span>'
                f'<span class="logaxis-labels" aria-hidden="true"><span>10⁻¹²</span><span>10⁻⁶</span>'
                f'<span>1</span></span></span> · '
                f'{allowed_words}{_cut_words(pos.allowed)}</p>')
        after = [f'<li>{token_html(vocab, t, "chosen" if t == pos.chosen else "")} '
                 f'<span class="pq">p {fmt_prob(p)}</span> '
                 f'{_bar(q, fmt_prob(q), t == pos.chosen) if q > 0 else cut_mark()}</li>'
                 for t, p, q in sorted(pos.allowed, key=lambda a: (-a[2], -a[1]))[:self.top_k]]  # by q̃, then p (top-k / top-p cuts have q̃ 0)
        if len(pos.allowed) > self.top_k:
            after.append('<li class="more">' + _("y {n} más").format(n=plain_int(len(pos.allowed) - self.top_k))
                         + "</li>")
        earlier, later = _("antes de la máscara"), _("después")
        return (head + kept + self._all_tokens(pos) + '<div class="pv-cols">'
                f'<div><h4>{earlier}: p(v | x, y<sub>&lt;j</sub>)</h4><ol class="ranked">{"".join(before)}</ol></div>'
                f'<div><h4>{later}: q̃(v | x, y<sub>&lt;j</sub>)</h4><ol class="ranked">{"".join(after)}</ol></div>'
                '</div>')

    def _all_tokens(self, pos) -> str:
        """The whole vocabulary for one position, most probable first, masked-out tokens greyed.

        Without a script the first ``ALL_STATIC`` rows are plain HTML; the site's views.js
        replaces them, when the reader opens the list, with all V rows and a search box, from
        ``data-p`` (every p with 6 significant digits, by token id: enough that the script's
        rounding to 3 prints what ``fmt_prob`` prints here) and ``data-allowed`` (the
        allowed set as a hexadecimal bitmask, token 0 in the lowest bit of the first digit).
        """
        if pos.probs is None:
            return ""
        vocab, p = self.gen.vocab, pos.probs
        allowed = ({t for t, _, _ in pos.allowed} if pos.allowed is not None else set(range(len(vocab))))
        order = np.argsort(-p, kind="stable")
        rows = "".join(f'<li{"" if t in allowed else " class=out"}>'
                       f'{token_html(vocab, t, "" if t in allowed else "removed")} {fmt_prob(float(p[t]))}</li>'
                       for t in order[:ALL_STATIC].tolist())
        bits = 0
        for t in allowed:
            bits |= 1 << t
        hexmask = "".join(f"{(bits >> (4 * i)) & 15:x}" for i in range((len(vocab) + 3) // 4))
        probs = ",".join(f"{x:.6g}" for x in p.tolist())
        summary = _("Los {n} tokens, del más probable al menos (los que quita la máscara, en gris)").format(
            n=plain_int(len(vocab)))
        more = _("Los {n} primeros; con JavaScript, la lista completa, con un buscador.").format(
            n=plain_int(ALL_STATIC))
        return (f'<details class="pv-all" data-testid="pv-all"><summary>{summary}</summary>'
                f'<div class="pv-all-body" data-p="{probs}" data-allowed="{hexmask}">'
                f'<ol class="pv-all-list">{rows}</ol><p class="more">{more}</p></div></details>')

    def _repr_html_(self) -> str:
        gen, uid = self.gen, self._uid()
        n = len(gen.positions)
        if n == 0:
            words = _("«{text}»: ninguna posición.").format(text=escape(gen.text))
            return styled(f'<p class="enum-summary">{words}</p>')
        open_j = self.open_at or next((j for j, pos in enumerate(gen.positions, start=1) if not pos.is_forced), 1)
        testid = f' data-testid="{self.entry_testid}"' if self.entry_testid else ""
        strip, panels, rules = [], [], []
        for j, pos in enumerate(gen.positions, start=1):
            kind = "forced" if pos.is_forced else "choice"
            checked = " checked" if j == open_j else ""
            label = _("posición {j}").format(j=j)
            band = ""
            if self.kept_shading and pos.allowed is not None:
                band = f' data-kept-band="{kept_band(pos.kept_mass)}"'
                label += " · " + _("masa conservada {kept}").format(kept=fmt_prob(pos.kept_mass))
            strip.append(f'<label class="pv-pos {kind}"{testid} data-position="{j}" data-forced="{pos.forced or ""}"{band} '
                         f'title="{label}"><input type="radio" name="{uid}" id="{uid}-{j}" '
                         f'aria-label="{label}"{checked}>'
                         f'<span class="pv-j">{j}</span>{token_html(gen.vocab, pos.chosen)}</label>')
            panels.append(f'<section class="pv-panel" data-panel="{j}" id="{uid}-p{j}">{self._panel(j, pos)}</section>')
            rules.append(f"#{uid}:has(#{uid}-{j}:checked) #{uid}-p{j}")
        forced = [pos.forced for pos in gen.positions]
        choices = n - sum(f is not None for f in forced)
        tokens = ngettext("{n} token", "{n} tokens", n).format(n=plain_int(n))
        how = _("Elige una posición con un clic, o con Tab y las flechas, para ver su detalle.")
        if gen.grammar is None:  # no mask: every position is the model's own choice
            caption = _("«{text}», posición a posición: {tokens}, sin restricción.").format(
                text=escape(gen.text), tokens=tokens) + " " + how
        else:
            parts = []
            if "token" in forced:
                k = forced.count("token")
                parts.append(ngettext("{n} forzada con un solo token", "{n} forzadas con un solo token",
                                      k).format(n=plain_int(k)))
            if "split" in forced:
                parts.append(split_clause([len(pos.allowed) for pos in gen.positions if pos.forced == "split"]))
            if "fast_forward" in forced:
                k = forced.count("fast_forward")
                parts.append(ngettext("{n} adelantada sin muestrear", "{n} adelantadas sin muestrear",
                                      k).format(n=plain_int(k)))
            parts.append(ngettext("{n} en la que se elige el texto (marcada en azul)",
                                  "{n} en las que se elige el texto (marcadas en azul)",
                                  choices).format(n=plain_int(choices)))
            # «posiciones», not «tokens»: the parts that follow («10 forzadas…») agree with it
            positions_n = ngettext("{n} posición, una por token", "{n} posiciones, una por token", n).format(
                n=plain_int(n))
            caption = _("«{text}», posición a posición: {positions}; {parts}.").format(
                text=escape(gen.text), positions=positions_n, parts=", ".join(parts)) + " " + how
        positions = _("posiciones")
        style = f"<style>{', '.join(rules)} {{ display: block; }}</style>"
        labels = escape(json.dumps([token_label(piece) for piece in gen.vocab], ensure_ascii=False))
        return styled(f'<div class="pv" id="{uid}" data-testid="positions-view" data-vocab="{labels}">{style}'
                      f'<p class="pv-caption">{caption}</p>'
                      f'<div class="pv-strip" role="radiogroup" aria-label="{positions}">{"".join(strip)}</div>'
                      f'{self._kept_key() if self.kept_shading and gen.grammar is not None else ""}'
                      f'<div class="pv-panels">{"".join(panels)}</div></div>')

    def _kept_key(self) -> str:
        """The key of the strip's underlines: one swatch per band of ``KEPT_BANDS``."""
        edges = [fmt_prob(x) if x >= 0.01 else fmt_sci(x, 1) for x in KEPT_BANDS]
        ranges = ([f"≥ {edges[0]}"] + [f"{edges[i + 1]} – {edges[i]}" for i in range(len(edges) - 1)]
                  + [f"< {edges[-1]}"])
        swatches = " · ".join(f'<span class="pv-kept-swatch" data-kept-band="{i}"></span> {r}'
                              for i, r in enumerate(ranges))
        words = _("Subrayado de cada posición: su masa conservada p(A<sub>j</sub>), más oscuro cuanto "
                  "menos masa dejó la máscara:")
        return f'<p class="pv-kept-key" data-testid="kept-key">{words} {swatches}</p>'


def enumeration_html(result) -> str:
    """The enumeration: p(G | x) (test hook), rejection-sampling cost, and the table (test hook)."""
    rows = []
    for r in result.rows:
        ratio = r.masked / r.conditional if r.conditional > 0 else math.inf
        rows.append(f'<tr data-text="{escape(r.label)}" data-conditional="{r.conditional!r}" '
                    f'data-masked="{r.masked!r}"><th scope="row"><code>{escape(r.label)}</code></th>'
                    f'<td class="num">{fmt_int(r.paths)}</td>'
                    f'<td>{_bar(r.conditional, _table_prob(r.conditional))}</td>'
                    f'<td>{_bar(r.masked, _table_prob(r.masked))}</td>'
                    f'<td class="num">×{fmt_sci(ratio, 2)}</td></tr>')
    cond_sum = sum(r.conditional for r in result.rows)
    mask_sum = sum(r.masked for r in result.rows)
    paths = counted(ngettext("{n} camino de tokens", "{n} caminos de tokens", result.paths), result.paths)
    work = _("{positions} en {passes}").format(
        positions=counted(ngettext("{n} posición del modelo", "{n} posiciones del modelo", result.forward_rows),
                          result.forward_rows),
        passes=counted(ngettext("{n} llamada en lote", "{n} llamadas en lote", result.forward_calls),
                       result.forward_calls))
    rejection = _("Muestreo por rechazo: 1 / p(G | x) = {tries} intentos de media; a un nanosegundo por "
                  "intento, {years} años.").format(
        tries=fmt_sci_log(-result.log_p_grammar),
        years=fmt_sci_log(-result.log_p_grammar + math.log(1e-9 / SECONDS_PER_YEAR)))
    temperature = _("temperatura {t}").format(t=fmt_decimal(result.temperature, 2))
    summary = (f'<p class="enum-summary">p(G | x) = <strong data-testid="p-grammar" '
               f'data-value="{result.p_grammar!r}">{fmt_sci_log(result.log_p_grammar, 6)}</strong> '
               f'(ln p = {fmt_decimal(result.log_p_grammar, 4)}) · {paths} · {work} · '
               f'{temperature} · '
               f'{fmt_decimal(result.seconds, 2)} s</p>'
               f'<p class="enum-summary">{rejection}</p>')
    return styled(summary + _scroll(_("tabla de la enumeración"))
            + '<table class="enumeration" data-testid="enumeration-table">'
            + "<thead><tr>" + _heads([_("texto g"), _("caminos"), _("condicionada p(g | x, G)"),
                                      _("máscara q̃(g | x)"), _("q̃ / condicionada")])
            + "</tr></thead><tbody>" + "".join(rows) + "</tbody>"
            + "<tfoot><tr><th scope='row'>" + _("suma") + f"</th><td class='num'>{fmt_int(result.paths)}</td>"
            f"<td>{fmt_decimal(cond_sum, 6)}</td><td>{fmt_decimal(mask_sum, 6)}</td><td></td></tr></tfoot>"
            "</table></div>")


def rejection_html(result) -> str:
    """Rejection sampling: tries, passes with and without early abort, and the accepted answers."""
    counts = result.counts()
    rows = "".join(f"<tr><td><code>{escape(text.decode('utf-8', 'replace'))}</code></td>"
                   f"<td class='num'>{plain_int(n)}</td></tr>"
                   for text, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    accepted, tries = len(result.accepted), len(result.tries)
    words = _("{tries} para {answers}: {mean} intentos por respuesta. Posiciones calculadas por el modelo "
              "(una por token): {passes} abortando en cuanto el prefijo sale de la gramática, "
              "{passes_full} sin abortar").format(
        tries=counted(ngettext("{n} intento", "{n} intentos", tries), tries),
        answers=counted(ngettext("{n} respuesta de la gramática", "{n} respuestas de la gramática", accepted),
                        accepted),
        mean=fmt_decimal(result.mean_tries, 1), passes=fmt_int(result.passes),
        passes_full=fmt_int(result.passes_full))
    return styled(f'<p class="enum-summary" data-testid="rejection-summary" data-tries="{tries}" '
            f'data-accepted="{accepted}">{words} · {fmt_decimal(result.seconds, 2)} s</p>'
            '<table class="compact-table"><thead><tr>' + _heads([_("respuesta aceptada"), _("veces")], '"')
            + f'</tr></thead><tbody>{rows}</tbody></table>')
