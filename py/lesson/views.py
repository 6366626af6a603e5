"""HTML views of the lesson's results: token strips, samples, the per-position picture and the
enumeration table. Plain HTML with the site's CSS classes, returned by ``_repr_html_``, so the same
objects render in a page cell, at build time and in Jupyter.

Test hooks (stable): ``[data-testid=masked-sample]`` / ``[data-testid=unmasked-sample]`` hold exactly
the generated text; ``[data-testid=enumeration-table]`` has one row per text with ``data-text``,
``data-conditional`` and ``data-masked`` (Python ``repr`` of the float); ``[data-testid=p-grammar]``
carries p(G | x) in ``data-value``.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

from .numbers import es_decimal, es_int, es_prob, es_sci

_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}
_CSS: list[str] = []  # views.css, read once


def styled(html: str) -> str:
    """A view's HTML with the views' stylesheet in front, so it renders alike in a page and in Jupyter."""
    if not _CSS:
        _CSS.append((Path(__file__).with_name("views.css")).read_text(encoding="utf-8"))
    return f'<div class="lesson-view"><style>{_CSS[0]}</style>{html}</div>'


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


def generation_html(gen) -> str:
    """One Generation: the answer (test hook), its token strip and its path probabilities."""
    hook = "masked-sample" if gen.masked else "unmasked-sample"
    kind = "con máscara" if gen.masked else "sin máscara"
    probs = f"p(y | x) = {es_sci(math.exp(gen.log_p))}"
    if gen.masked:
        probs += f" · q̃(camino) = {es_prob(math.exp(gen.log_q))}"
    return styled(f'<figure class="generation">'
            f'<figcaption>{kind} · semilla {gen.seed} · temperatura {es_decimal(gen.temperature, 1)} · '
            f'{len(gen.token_ids)} tokens · {probs}</figcaption>'
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
            extra = f"<br><small>q̃(camino) = {es_prob(math.exp(gen.log_q))}</small>" if gen.masked else ""
            rows.append(f'<tr><td>{gen.seed}</td><td><code class="answer" data-testid="{hook}">'
                        f'{escape(gen.text)}</code>{extra}</td>'
                        f'<td>{strip_html(gen.vocab, gen.token_ids)}</td></tr>')
        caption = f"<caption>{escape(self.caption)}</caption>" if self.caption else ""
        return styled(_scroll("muestras") + '<table class="samples">' + caption +
                "<thead><tr><th scope='col'>semilla</th><th scope='col'>respuesta</th>"
                "<th scope='col'>tokens</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>")


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
    return es_decimal(p, 4) if p >= 1e-4 else es_sci(p, 3)


def _ranked(vocab, pairs, chosen: int, limit: int) -> str:
    items = [f'<li>{token_html(vocab, t, "chosen" if t == chosen else "")} '
             f'{_bar(p, es_prob(p), t == chosen)}</li>' for t, p in pairs[:limit]]
    if len(pairs) > limit:
        items.append(f'<li class="more">y {len(pairs) - limit} más</li>')
    return '<ol class="ranked">' + "".join(items) + "</ol>"


def log_width(p: float, decades: int = 12) -> float:
    """Bar width (0..100) for a probability on a log scale: 1 is full, 10^-decades or less is empty."""
    if p <= 0:
        return 0.0
    return max(0.0, min(100.0, 100 * (1 + math.log10(p) / decades)))


class PositionsView:
    """The per-position picture of one generation: for each position j, the model's top tokens
    before the mask, the allowed tokens after it (renormalised), the kept mass p(A_j) on a log
    scale, the chosen token, and whether the position was forced."""

    def __init__(self, gen, top_k: int = 5):
        self.gen, self.top_k = gen, top_k

    def _row(self, j: int, pos) -> str:
        vocab = self.gen.vocab
        forced = '<span class="forced-mark">forzada</span>' if pos.forced else ""
        kept = ""
        if pos.kept_mass is not None:
            kept = (f'<span class="logbar" title="escala logarítmica: de 10⁻¹² a 1">'
                    f'<span class="pbar-fill" style="width:{log_width(pos.kept_mass):.1f}%"></span></span> '
                    f'{es_prob(pos.kept_mass)}')
        after = _ranked(vocab, pos.allowed, pos.chosen, self.top_k) if pos.allowed else ""
        return (f'<tr class="{"forced" if pos.forced else "choice"}"><th scope="row">{j}</th>'
                f'<td>{token_html(vocab, pos.chosen, "chosen")} {forced}</td>'
                f'<td>{_ranked(vocab, pos.top, pos.chosen, self.top_k)}</td>'
                f'<td class="kept">{kept}</td><td>{after}</td></tr>')

    def _repr_html_(self) -> str:
        gen = self.gen
        rows = "".join(self._row(j, pos) for j, pos in enumerate(gen.positions, start=1))
        forced = sum(pos.forced for pos in gen.positions)
        caption = (f"«{escape(gen.text)}», posición a posición: {len(gen.positions)} tokens, "
                   f"{forced} posiciones forzadas (una sola continuación del texto). La masa "
                   f"conservada va en escala logarítmica: la barra llena es 1, la vacía 10⁻¹² o menos.")
        return styled(_scroll("posición a posición") + '<table class="positions">'
                f"<caption>{caption}</caption><thead><tr><th scope='col'>j</th>"
                "<th scope='col'>token elegido</th><th scope='col'>antes de la máscara: p(v | x, y<sub>&lt;j</sub>)</th>"
                "<th scope='col'>masa conservada p(A<sub>j</sub>)</th>"
                "<th scope='col'>después: q̃(v | x, y<sub>&lt;j</sub>)</th></tr></thead>"
                f"<tbody>{rows}</tbody></table></div>")


def enumeration_html(result) -> str:
    """The enumeration: p(G | x) (test hook), rejection-sampling cost, and the table (test hook)."""
    rows = []
    for r in result.rows:
        ratio = r.masked / r.conditional if r.conditional > 0 else math.inf
        rows.append(f'<tr data-text="{escape(r.label)}" data-conditional="{r.conditional!r}" '
                    f'data-masked="{r.masked!r}"><th scope="row"><code>{escape(r.label)}</code></th>'
                    f'<td class="num">{es_int(r.paths)}</td>'
                    f'<td>{_bar(r.conditional, _table_prob(r.conditional))}</td>'
                    f'<td>{_bar(r.masked, _table_prob(r.masked))}</td>'
                    f'<td class="num">×{es_sci(ratio, 2)}</td></tr>')
    cond_sum = sum(r.conditional for r in result.rows)
    mask_sum = sum(r.masked for r in result.rows)
    summary = (f'<p class="enum-summary">p(G | x) = <strong data-testid="p-grammar" '
               f'data-value="{result.p_grammar!r}">{es_sci(result.p_grammar, 6)}</strong> '
               f'(ln p = {es_decimal(result.log_p_grammar, 4)}) · {es_int(result.paths)} caminos de tokens · '
               f'{es_int(result.forward_rows)} posiciones del modelo en {result.forward_calls} pasadas · '
               f'temperatura {es_decimal(result.temperature, 2)} · {es_decimal(result.seconds, 2)} s</p>'
               f'<p class="enum-summary">Muestreo por rechazo: 1 / p(G | x) = '
               f'{es_sci(result.expected_tries)} intentos de media; a un nanosegundo por intento, '
               f'{es_sci(result.years_at_one_ns)} años.</p>')
    return styled(summary + _scroll("tabla de la enumeración") + '<table class="enumeration" data-testid="enumeration-table">'
            "<thead><tr><th scope='col'>texto g</th><th scope='col'>caminos</th>"
            "<th scope='col'>condicionada p(g | x, G)</th><th scope='col'>máscara q̃(g | x)</th>"
            "<th scope='col'>q̃ / condicionada</th></tr></thead><tbody>" + "".join(rows) + "</tbody>"
            f"<tfoot><tr><th scope='row'>suma</th><td class='num'>{es_int(result.paths)}</td>"
            f"<td>{es_decimal(cond_sum, 6)}</td><td>{es_decimal(mask_sum, 6)}</td><td></td></tr></tfoot>"
            "</table></div>")


def rejection_html(result) -> str:
    """Rejection sampling: tries, passes with and without early abort, and the accepted answers."""
    counts = result.counts()
    rows = "".join(f"<tr><td><code>{escape(text.decode('utf-8', 'replace'))}</code></td>"
                   f"<td class='num'>{n}</td></tr>" for text, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    accepted = len(result.accepted)
    return styled(f'<p class="enum-summary" data-testid="rejection-summary" data-tries="{len(result.tries)}" '
            f'data-accepted="{accepted}">{es_int(len(result.tries))} intentos para {accepted} respuestas '
            f'en G: {es_decimal(result.mean_tries, 1)} intentos por respuesta. Pasadas del modelo: '
            f'{es_int(result.passes)} abortando en cuanto el prefijo sale de G, '
            f'{es_int(result.passes_full)} sin abortar · {es_decimal(result.seconds, 2)} s</p>'
            '<table class="compact-table"><thead><tr><th scope="col">respuesta aceptada</th>'
            f'<th scope="col">veces</th></tr></thead><tbody>{rows}</tbody></table>')
