"""The «Laboratorio»'s view: the current branch (summary, text, per-position strip), the tree of
branches, and the open position's tokens, every one the settings allow, as buttons.

Test hooks: ``[data-testid=lab-output]`` (``data-text``, ``data-accepted``, ``data-state``, and
for the page ``data-tree``, ``data-branch``, ``data-open``); one ``[data-testid=lab-position]``
per token; ``[data-testid=lab-branch]`` per branch (``data-index``, ``data-text``, ``data-state``,
``data-parent``, ``data-from``); ``[data-testid=lab-choices]`` (``data-position``) with one
``[data-testid=lab-allowed-token]`` button per token offered there (``data-token-id``,
``data-position``, ``data-p``, ``data-q``).
"""

from __future__ import annotations

import json
import math
from html import escape

import numpy as np

from masker import MaskerError

from ..i18n import _, get_language, ngettext
from ..numbers import fmt_decimal, fmt_int, fmt_prob, fmt_sci, fmt_sci_log
from ..views import PositionsView, status_html, styled, token_html, token_label
from .exact import MAX_TEXTS, exact_for
from .tree import STATUS_WORDS, offered_at
from .words import count


def kind_name(kind: str) -> str:
    """A grammar's kind (``Grammar.kind``) as the form's menu names it, in the current language."""
    names = {"choice": _("lista de opciones"), "regex": _("expresión regular"), "json_schema": "JSON Schema",
             "cfg": _("gramática GBNF")}
    return names.get(kind, "")


def tokens_text(n: int) -> str:
    """«1 token», «12 tokens» (the current language)."""
    return count(ngettext("{n} token", "{n} tokens", n), n)


def ln_text(x: float) -> str:
    """A natural log with two decimals («−43,35» / "−43.35"); one that rounds to zero is «0,00», not
    «−0,00»."""
    if not math.isfinite(x):
        return "−∞" if x < 0 else "∞"
    return fmt_decimal(0.0 if round(x, 2) == 0 else x, 2)


def kept_text(log_kept: float) -> str:
    """The branch's kept mass Π p(A_j) from its natural log, written as the strip writes each
    p(A_j) (:func:`~lesson.numbers.fmt_prob`: «0,013», «7,86·10⁻³»); from its log only when the
    product underflows a float."""
    kept = math.exp(log_kept) if math.isfinite(log_kept) else 0.0
    return fmt_prob(kept) if kept > 1e-300 or log_kept == -math.inf else fmt_sci_log(log_kept)


def ordinal(i: int) -> str:
    """A 1-based byte number as an ordinal in the current language: «2.º», "2nd"."""
    if get_language() != "en":
        return f"{i}.º"
    suffix = "th" if 10 <= i % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(i % 10, "th")
    return f"{i}{suffix}"


def refused_at(matcher, token_id: int) -> int | None:
    """Index of the first byte of token ``token_id`` that the grammar refuses after the matcher's
    prefix, or None when the whole token is allowed. The matcher is not changed."""
    piece = matcher.vocab[token_id]
    probe = matcher.fork()
    for i in range(len(piece)):
        try:
            probe.consume_bytes(piece[i:i + 1])
        except MaskerError:
            return i
    return None


def matcher_at(lab, position: int):
    """The current branch's matcher before a 1-based position (a fresh one fed the tokens before
    it; the decoder's own one for the next position); None without a grammar."""
    decoder = lab.decoder
    ids = decoder.generation.token_ids
    if lab.grammar is None:
        return None
    if position == len(ids) + 1:
        return decoder.matcher
    matcher = lab.grammar.matcher(lab.tok.vocab)
    for t in ids[:position - 1]:
        matcher.consume(t)
    return matcher


def summary_html(lab) -> str:
    """The current branch in one line: kind, tokens, ln p, ln q̃, kept mass, status, verdict; the
    lab's note (said once: why a Step did nothing, why a new experiment started) before it, on its
    own line as a notice (``[data-testid=lab-notice]``)."""
    gen, decoder = lab.decoder.generation, lab.decoder
    notice = (f'<p class="kernel-notice lab-notice" data-testid="lab-notice">{escape(lab.note)}</p>'
              if lab.note else "")
    parts = [kind_name(lab.grammar.kind) if lab.grammar is not None else _("sin restricción"),
             _("rama {i} de {n}").format(i=lab.current + 1, n=len(lab.branches)), tokens_text(len(gen.token_ids))]
    if gen.positions:
        parts.append(f"ln p(y | x) = {ln_text(gen.log_p)}")
        if lab.grammar is not None:
            parts.append(f"ln q̃(y | x) = {ln_text(gen.log_q)}")
            parts.append(_("masa conservada Π p(A<sub>j</sub>) = {kept}").format(kept=kept_text(gen.log_kept)))
    parts.append(status_html(gen) if decoder.done else lab.branch.state_words(False))
    if decoder.done and lab.grammar is not None:
        parts.append(_("la gramática lo acepta") if lab.accepted(lab.branch) else _("la gramática no lo acepta"))
        if lab.kind == "json_schema":
            try:
                json.loads(gen.text)
                parts.append(_("json.loads lo lee"))
            except ValueError:
                parts.append(_("json.loads no lo lee"))
    return notice + f'<p class="lab-summary">{" · ".join(escape(x) if "<" not in x else x for x in parts if x)}</p>'


def branches_html(lab) -> str:
    """The tree as a list: each branch's text, status, ln p and ln q̃, and where it left its
    parent; a button shows it."""
    finished = [b for b in lab.branches if b.decoder.done and lab.accepted(b)]
    exact = exact_for(lab) if any(b.decoder.done for b in lab.branches) else None
    items = []
    for i, b in enumerate(lab.branches):
        gen = b.decoder.generation
        where = (_("desde el prompt") if b.parent is None else
                 _("sale de la rama {parent} en la posición {start} con {token}").format(
                     parent=b.parent + 1, start=b.start, token=token_html(lab.tok.vocab, b.start_token)))
        logs = f"ln p = {ln_text(gen.log_p)}" + (f" · ln q̃ = {ln_text(gen.log_q)}" if lab.grammar is not None else "")
        row = exact.of(gen.bytes) if exact is not None and b in finished else None
        facts, data = _exact_facts(row, lab)
        current = i == lab.current
        name, empty = _("rama {i}").format(i=i + 1), _("(vacío)")
        items.append(
            f'<li class="lab-branch{" current" if current else ""}" data-testid="lab-branch" data-index="{i}" '
            f'data-text="{escape(gen.text)}" data-state="{b.state}" '
            f'data-parent="{"" if b.parent is None else b.parent}" data-from="{b.start or ""}"{data}>'
            f'<button type="button" class="lab-branch-open" data-branch="{i}" aria-pressed="{str(current).lower()}">'
            f'{name}</button> <code class="lab-branch-text">{escape(gen.text) or empty}</code> '
            f'<span class="lab-branch-facts">{escape(_state_words(lab, b))} · '
            f'{tokens_text(len(gen.token_ids))} · {logs} · {where}</span>{facts}</li>')
    head = _("<strong>Ramas</strong> ({n}): elige un token distinto en cualquier posición y sale una rama "
             "nueva; ninguna se borra.").format(n=len(lab.branches))
    return (f'<div class="lab-tree"><p>{head}</p>{_exact_head(exact, lab)}'
            f'<ol class="lab-branches">{"".join(items)}</ol></div>')


def _state_words(lab, branch) -> str:
    """A branch's status; without a constraint a finished branch is «terminada» (nothing to be
    valid against)."""
    status = branch.status(lab.accepted(branch))
    return STATUS_WORDS["finished" if lab.grammar is None and status == "valid" else status]()


def _exact_head(exact, lab) -> str:
    """One line on the exact conditional: how it was computed, or why it was not."""
    if exact is None:
        return ""
    if exact.enumeration is None:
        words = _("La probabilidad exacta p(g | x, G) de cada texto g, la del modelo entre los textos de la "
                  "gramática G, no se calcula: {reason}.").format(reason=escape(exact.reason))
        return f'<p class="lab-exact-head" data-testid="lab-exact" data-exact="no">{words}</p>'

    e = exact.enumeration
    notes = []
    if lab.settings["top_k"] or lab.settings["top_p"]:
        notes.append(_("Con top-k o top-p puestos, esta q̃ es la de la máscara sola, sin ellos."))
    budget = lab.settings["max_tokens"]
    if budget is not None and e.counts is not None and e.counts.longest_tokens > budget:
        notes.append(_("Algunos caminos tienen más de {tokens}, el máximo puesto: esta q̃ los cuenta como si no "
                       "hubiera máximo, y el bucle los corta.").format(tokens=tokens_text(budget)))
    words = _("La gramática G tiene {texts} ({paths}); el laboratorio los recorrió todos con el modelo, así "
              "que cada rama válida muestra, para su texto g (todas sus particiones sumadas), la probabilidad "
              "exacta <strong>p(g | x, G)</strong>, la del modelo entre los textos de G, junto a "
              "<strong>q̃(g | x)</strong>, la de la generación restringida, con la temperatura {temperature}. "
              "Si q̃ es mayor, la máscara infla ese texto; si es menor, lo desinfla. Lo explica "
              "<a href=\"mascara.html\">«La máscara»</a>.").format(
        texts=texts_words(exact.texts, len(e.rows)),
        paths=count(ngettext("{n} camino de tokens", "{n} caminos de tokens", e.paths), e.paths),
        temperature=fmt_decimal(lab.settings["temperature"], 1))
    return (f'<p class="lab-exact-head" data-testid="lab-exact" data-exact="yes">{words}'
            f'{"".join(" " + n for n in notes)}</p>' + exact_table_html(exact, lab))


EXACT_ROWS = 200  # texts the table of every text of G lists at most (most probable first)


def exact_table_html(exact, lab) -> str:
    """Every text g of G that can end a branch, with p(g | x, G), q̃(g | x), their ratio and its
    splits, most probable first (``EXACT_ROWS`` at most), and which branch, if any, wrote it: a
    closed ``details`` (``[data-testid=lab-exact-table]``, one ``tr`` per text with
    ``data-text``, ``data-exact``, ``data-masked``)."""
    e = exact.enumeration
    written = {}
    for i, b in enumerate(lab.branches):
        if b.decoder.done and lab.accepted(b):
            written.setdefault(b.decoder.generation.bytes, i + 1)
    only_mask = " " + _("(solo la máscara)") if lab.settings["top_k"] or lab.settings["top_p"] else ""
    word = _("rama {i}")
    rows = []
    for row in e.rows[:EXACT_ROWS]:
        ratio = row.masked / row.conditional if row.conditional > 0 else math.inf
        branch = word.format(i=written[row.text]) if row.text in written else "—"
        rows.append(f'<tr data-text="{escape(row.label)}" data-exact="{row.conditional!r}" '
                    f'data-masked="{row.masked!r}"><td><code>{escape(row.label)}</code></td>'
                    f'<td class="num">{fmt_prob(row.conditional)}</td><td class="num">{fmt_prob(row.masked)}</td>'
                    f'<td class="num">{ratio_text(ratio)}</td><td class="num">{fmt_int(row.paths)}</td>'
                    f'<td>{branch}</td></tr>')
    more = len(e.rows) - len(rows)
    summary = ngettext("El único texto de G que puede terminar una rama, con sus dos probabilidades",
                       "Los {n} textos de G que pueden terminar una rama, con sus dos probabilidades",
                       len(e.rows)).format(n=fmt_int(len(e.rows)))
    if more:
        summary += _(" (los {shown} más probables)").format(shown=len(rows))
    heads = [_("texto g"), "p(g | x, G)", "q̃(g | x)" + only_mask, "q̃ / p", _("particiones"), _("rama")]
    head = "".join(f'<th scope="col">{h}</th>' for h in heads)
    region = _("todos los textos de G")
    return (f'<details class="lab-exact-table" data-testid="lab-exact-table"><summary>{summary}</summary>'
            f'<div class="lab-table-wrap" tabindex="0" role="region" aria-label="{region}">'
            f'<table class="compact-table"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
            f'</table></div></details>')


def texts_words(texts: int | None, ends: int) -> str:
    """How many texts G has and how many of them can end a branch (the model has no end-of-text
    token: a branch ends where the grammar allows nothing more, or, with the stop box, at its first
    valid text): «2 textos» when they are the same; «3 textos, de los que 2 pueden terminar una rama
    con estos ajustes»; «infinitos textos, …» (``texts`` inf); «más de 10 000 textos, …» (None)."""
    words = count(ngettext("{n} texto", "{n} textos", ends), ends)
    if texts == ends:
        return words
    if texts is None:
        every = _("más de {most} textos").format(most=fmt_int(MAX_TEXTS))
    elif math.isinf(texts):
        every = _("infinitos textos")
    else:
        every = count(ngettext("{n} texto", "{n} textos", int(texts)), int(texts))
    return ngettext("{every}, de los que {n} puede terminar una rama con estos ajustes",
                    "{every}, de los que {n} pueden terminar una rama con estos ajustes", ends).format(
        every=every, n=fmt_int(ends))


def ratio_text(ratio: float) -> str:
    """q̃ / p with three significant digits («6,26», «112», «0,420»; "6.26" in English); «∞» when p
    underflows."""
    return fmt_sci(ratio, 3) if math.isfinite(ratio) else "∞"


def _exact_facts(row, lab) -> tuple[str, str]:
    """A valid branch's p(g | x, G) and q̃(g | x) in words, and its data attributes (data-exact,
    data-masked: the float64 values, for tests); ("", "") without them. The verdict is read off
    the ratio as printed, so «1,00» is never called an inflation."""
    if row is None:
        return "", ""
    ratio = row.masked / row.conditional if row.conditional > 0 else math.inf
    shown = float(f"{ratio:.3g}") if math.isfinite(ratio) else ratio
    verdict = (_("la máscara lo infla") if shown > 1 else _("la máscara lo desinfla") if shown < 1
               else _("la máscara lo deja casi igual"))
    splits = count(ngettext("{n} partición", "{n} particiones", row.paths), row.paths)
    only_mask = " " + _("(solo la máscara)") if lab.settings["top_k"] or lab.settings["top_p"] else ""
    facts = (f'<span class="lab-exact">p(g | x, G) = {fmt_prob(row.conditional)} · q̃(g | x){only_mask} = '
             f'{fmt_prob(row.masked)} ({splits}) · q̃(g | x) / p(g | x, G) = {ratio_text(ratio)}: {verdict}</span>')
    return f' {facts}', f' data-exact="{row.conditional!r}" data-masked="{row.masked!r}" data-ratio="{shown!r}"'


def choices_html(lab) -> str:
    """The open position's tokens: every one the settings allow (q̃ > 0) as a button with p and q̃,
    with a search box; then how many the mask or top-k / top-p removed, and the model's most
    probable removed ones with the first byte the grammar refuses."""
    decoder, j = lab.decoder, lab.open_position()
    gen = decoder.generation
    n = len(gen.token_ids)
    if j > n and decoder.done:
        return ""
    tokens = offered_at(decoder, j)
    vocab = lab.tok.vocab
    chosen = gen.token_ids[j - 1] if j <= n else None
    buttons = "".join(_token_button(vocab, j, t, p, q, t == chosen) for t, p, q in tokens)
    token = token_html(vocab, tokens[0][0])
    allowed = count(ngettext("{n} token permitido por los ajustes", "{n} tokens permitidos por los ajustes",
                             len(tokens)), len(tokens))
    if len(tokens) == 1 and j == n + 1:  # nothing to choose: say so instead of inviting a choice
        what = _("<strong>Posición {j}, la siguiente</strong>: {left} (q̃ = 1). Pulsa «Paso» para "
                 "tomarlo.").format(j=j, left=_one_left(lab, token))
    elif len(tokens) == 1:
        what = _("<strong>Posición {j}</strong>: {left} (q̃ = 1).").format(j=j, left=_one_left(lab, token))
    elif j == n + 1:
        what = _("<strong>Posición {j}, la siguiente</strong>: {allowed} (q̃ &gt; 0). Elige uno y la rama sigue "
                 "con él, o pulsa «Paso».").format(j=j, allowed=allowed)
    else:
        what = _("<strong>Posición {j}</strong>: {allowed} (q̃ &gt; 0); el de esta rama va "
                 "marcado. Elige otro y sale de aquí una rama nueva {keeping}; esta se queda como "
                 "está.").format(j=j, allowed=allowed, keeping=_before_words(j))
    look = _("buscar entre ellos")
    search = (f'<label class="lab-search">{look} <input type="search" data-testid="lab-token-search" '
              f'class="lab-token-search" autocomplete="off"></label> <span class="lab-search-count" aria-live="polite"></span>')
    return (f'<div class="lab-next" data-testid="lab-choices" data-position="{j}"><p>{what}</p>{search}'
            f'<ol class="lab-choices">{buttons}</ol>{_removed_html(lab, j, tokens)}</div>')


def _one_left(lab, token: str) -> str:
    """A position with one token on offer, without the word «forzada» (the strip keeps that word
    for what the constraint fixes): what is left after the mask and top-k / top-p."""
    if lab.grammar is None:
        return _("tras top-k y top-p solo queda un token, {token}").format(token=token)
    return _("tras la máscara, top-k y top-p solo queda un token, {token}").format(token=token)


def _before_words(j: int) -> str:
    """What a branch leaving at 1-based position ``j`` keeps: «desde el prompt», «con el token
    anterior», «con los 3 tokens anteriores»."""
    if j == 1:
        return _("desde el prompt")
    if j == 2:
        return _("con el token anterior")
    return count(ngettext("con el {n} token anterior", "con los {n} tokens anteriores", j - 1), j - 1)


def _token_button(vocab, j: int, t: int, p: float, q: float, chosen: bool) -> str:
    label = token_label(vocab[t])
    mine = ", " + _("el de esta rama") if chosen else ""
    return (f'<li><button type="button" class="lab-token{" chosen" if chosen else ""}" data-testid="lab-allowed-token" '
            f'data-token-id="{t}" data-position="{j}" data-p="{p!r}" data-q="{q!r}" data-label="{escape(label)}"'
            f'{" aria-current=true" if chosen else ""} '
            f'aria-label="{escape(label)} q̃ {fmt_prob(q)} p {fmt_prob(p)}{mine}">'
            f'{token_html(vocab, t, "chosen" if chosen else "")} <span class="pq">q̃ {fmt_prob(q)}</span> '
            f'<span class="pq p">p {fmt_prob(p)}</span></button></li>')


def _removed_html(lab, j: int, tokens) -> str:
    """What this position does not offer: the count cut by the mask and by top-k / top-p, and the
    model's most probable tokens the mask removed, with the first byte it refuses."""
    matcher = matcher_at(lab, j)
    gen = lab.decoder.generation
    p = gen.positions[j - 1].probs if j <= len(gen.token_ids) else lab.decoder.next_distribution()
    mask = np.ones(len(p), dtype=bool) if matcher is None else matcher.mask()
    cut = int(mask.sum()) - len(tokens)
    parts = []
    if matcher is not None:
        removed = int((~mask).sum())
        parts.append(count(ngettext("la máscara quita {n} token", "la máscara quita {n} tokens", removed), removed))
    if cut and matcher is not None:
        parts.append(count(ngettext("top-k / top-p quitan {n} token permitido más",
                                    "top-k / top-p quitan {n} tokens permitidos más", cut), cut))
    elif cut:
        parts.append(count(ngettext("top-k / top-p quitan {n} token", "top-k / top-p quitan {n} tokens", cut), cut))
    out = f'<p class="lab-removed-count">{"; ".join(parts).capitalize()}.</p>' if parts else ""
    if matcher is None:
        return out
    vocab = lab.tok.vocab
    removed = [t for t in np.argsort(-p, kind="stable")[:8].tolist() if not mask[t]]
    items = []
    for t in removed:
        i = refused_at(matcher, t)
        refused = (_("la gramática rechaza su primer byte (0x{byte:02X})") if i == 0 else
                   _("la gramática rechaza su {nth} byte (0x{byte:02X})")).format(nth=ordinal(i + 1), byte=vocab[t][i])
        items.append(f'<li>{token_html(vocab, t, "removed")} <span class="pq">p {fmt_prob(float(p[t]))}; '
                     f'{refused}</span></li>')
    if items:
        most = _("Los más probables que quitó la máscara:")
        out += f'<p>{most}</p><ol class="lab-refused">{"".join(items)}</ol>'
    return out


def compared_branch(lab) -> int | None:
    """The branch the current one is compared with: the reader's choice (``lab.compare_with``)
    when it names another branch, else the current branch's parent, else (the first branch) the
    second one; None for a tree of one branch."""
    chosen = lab.compare_with
    if chosen is not None and chosen != lab.current and 0 <= chosen < len(lab.branches):
        return chosen
    if lab.branch.parent is not None:
        return lab.branch.parent
    return 1 if len(lab.branches) > 1 else None


def comparison_html(lab) -> str:
    """The current branch beside another (:func:`compared_branch`), position by position: each
    one's token and q̃ (and p), from the first position where their tokens differ to the longer
    one's end, with a menu of every other branch (``[data-testid=lab-compare-with]``); "" for a
    tree of one branch."""
    other = compared_branch(lab)
    if other is None:
        return ""
    mine, theirs = lab.branch.decoder.generation, lab.branches[other].decoder.generation
    start = next((j + 1 for j, (a, b) in enumerate(zip(mine.token_ids, theirs.token_ids)) if a != b),
                 min(len(mine.token_ids), len(theirs.token_ids)) + 1)
    vocab = lab.tok.vocab
    rows = []
    for j in range(start, max(len(mine.positions), len(theirs.positions)) + 1):
        cells = []
        for gen in (mine, theirs):
            if j <= len(gen.positions):
                pos = gen.positions[j - 1]
                cells.append(f'<td>{token_html(vocab, pos.chosen)}</td><td>{fmt_prob(pos.q_chosen)}</td>'
                             f'<td>{fmt_prob(pos.p_chosen)}</td>')
            else:
                cells.append('<td colspan="3">—</td>')
        rows.append(f'<tr data-position="{j}"><th scope="row">{j}</th>{"".join(cells)}</tr>')
    me, them = lab.current + 1, other + 1
    summary = _("Comparar la rama {me} con la rama {parent}, posición a posición ({same})").format(
        me=me, parent=them, same=_same_until(start))
    region = _("comparación de las ramas {me} y {parent}").format(me=me, parent=them)
    where, col_me, col_them = _("posición"), _("rama {i}").format(i=me), _("rama {i}").format(i=them)
    word = _("rama {i}")
    options = "".join(f'<option value="{i}"{" selected" if i == other else ""}>{word.format(i=i + 1)}</option>'
                      for i in range(len(lab.branches)) if i != lab.current)
    pick = _("Comparar con")
    menu = (f'<p class="lab-compare-pick"><label>{pick} <select data-testid="lab-compare-with">{options}'
            f'</select></label></p>')
    opened = " open" if lab.compare_with is not None else ""
    return (f'<details class="lab-compare-branches" data-testid="lab-branch-compare" data-with="{other}"{opened}>'
            f'<summary>{summary}</summary>{menu}'
            f'<div class="lab-table-wrap" tabindex="0" role="region" aria-label="{region}">'
            f'<table><thead><tr><th scope="col">{where}</th>'
            f'<th scope="col">{col_me}</th><th scope="col">q̃</th><th scope="col">p</th>'
            f'<th scope="col">{col_them}</th><th scope="col">q̃</th><th scope="col">p</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></details>')


def _same_until(start: int) -> str:
    """Where two branches agree, when their tokens first differ at ``start``: «distintas desde
    la posición 1», «iguales en la posición 1», «iguales hasta la posición 4»."""
    if start == 1:
        return _("distintas desde la posición 1")
    if start == 2:
        return _("iguales en la posición 1")
    return _("iguales hasta la posición {j}").format(j=start - 1)


def ignored_keywords(grammar) -> list[tuple[str, str, str | None]]:
    """The keywords a JSON Schema grammar ignored (``JsonSchemaGrammar.ignored_keywords``: unknown
    to every draft, so a validator ignores them too): ``(keyword, its JSON pointer, the closest
    JSON Schema keyword or None)``, the guess by ``difflib`` (ratio 0.75 or more) among the
    keywords the masker knows (``masker.json_schema.keywords``). Empty for other grammars."""
    import difflib

    from masker.json_schema.keywords import ANNOTATIONS, IMPLEMENTED, REFUSED
    known = sorted(ANNOTATIONS | IMPLEMENTED | REFUSED)
    out = []
    for pointer in getattr(grammar, "ignored_keywords", None) or []:
        keyword = pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")  # RFC 6901
        guess = difflib.get_close_matches(keyword, known, n=1, cutoff=0.75)
        out.append((keyword, pointer, guess[0] if guess else None))
    return out


def literal_braces(grammar) -> list[tuple[int, str]]:
    """Where a regular expression reads a «{» as a literal character, since no valid repetition
    starts there (``masker.regex_parse.literal_braces``; Python's rule, which llguidance, Rust
    ``regex`` and ECMAScript's ``u`` mode do not follow): ``(offset from 0, the text from that
    «{»`` to its «}», or its next few characters)``. Empty for other grammars."""
    if getattr(grammar, "kind", None) != "regex":
        return []
    from masker.regex_parse import literal_braces as braces
    out = []
    for at in braces(grammar.source):
        close = grammar.source.find("}", at, at + 12)
        out.append((at, grammar.source[at:close + 1] if close != -1 else grammar.source[at:at + 4]))
    return out


def warnings_html(grammar) -> str:
    """The constraint's warnings above the result (``[data-testid=lab-warning]``, one ``li``
    each): each ignored JSON Schema keyword (``data-keyword``, ``data-guess``), where it is and,
    for a likely misspelling, the keyword meant; each «{» a regular expression reads as a literal
    character (``data-brace``, its offset from 0)."""
    found = ignored_keywords(grammar)
    braces = literal_braces(grammar)
    if not found and not braces:
        return ""
    items = []
    for keyword, pointer, guess in found:
        text = _("«{keyword}» (en {pointer}) no es una palabra clave de JSON Schema: no restringe nada").format(
            keyword=escape(keyword), pointer=escape(pointer or "/"))
        if guess:
            text += _("; ¿querías escribir «{guess}»?").format(guess=escape(guess))
        items.append(f'<li data-keyword="{escape(keyword)}" data-guess="{escape(guess or "")}">{text}</li>')
    for at, shown in braces:
        text = _("«{shown}» (en el carácter {n}) se lee como texto: una repetición se escribe {{m}}, {{m,}} o "
                 "{{m,n}}, y un «{{» literal, «\\{{»").format(shown=escape(shown), n=at + 1)
        items.append(f'<li data-brace="{at}">{text}</li>')
    if found:
        heading = ngettext("Una palabra clave ignorada", "{n} palabras clave ignoradas", len(found)).format(n=len(found))
    else:
        heading = ngettext("Una llave leída como texto", "{n} llaves leídas como texto", len(braces)).format(
            n=len(braces))
    return (f'<div class="lab-warning" data-testid="lab-warning" role="note"><p><strong>{heading}</strong></p>'
            f'<ul>{"".join(items)}</ul></div>')


def earley_items(decoder) -> int | None:
    """The items of the Earley set the branch's matcher is in (``EarleyAutomaton.items``), or
    None for a grammar that is not parsed with Earley sets (a DFA) or no grammar."""
    matcher = decoder.matcher
    items = getattr(matcher.grammar.automaton, "items", None) if matcher is not None else None
    return items(matcher.state) if items is not None else None


def lab_view_html(lab) -> str:
    """The whole view as HTML: the current branch (summary, text, strip), the tree, the open
    position's tokens and, with ``compare``, the unconstrained generation of the same seed."""
    gen = lab.decoder.generation
    accepted = lab.accepted(lab.branch)
    head = (f'<div class="lab-output" data-testid="lab-output" data-text="{escape(gen.text)}" '
            f'data-accepted="{str(accepted).lower()}" data-state="{lab.state}" data-tree="{escape(lab.tree())}" '
            f'data-branch="{lab.current}" data-open="{lab.selected or ""}" '
            f'data-items="{"" if (items := earley_items(lab.decoder)) is None else items}">'
            f'{warnings_html(lab.grammar)}{summary_html(lab)}<pre class="answer"><code>{escape(gen.text)}</code></pre>')
    strip = ""
    if gen.positions:
        open_at = lab.selected if lab.selected is not None and lab.selected <= len(gen.positions) else None
        if open_at is None and not lab.decoder.done:
            open_at = len(gen.positions)  # the newest token, beside the next position's choices
        strip = PositionsView(gen, uid="lab", open_at=open_at, entry_testid="lab-position",
                              kept_shading=True)._repr_html_()
    compare = ""
    if lab.unconstrained is not None:
        same = _("La misma semilla sin restricción")
        compare = (f'<div class="lab-compare"><p><strong>{same}</strong> '
                   f'({tokens_text(len(lab.unconstrained.token_ids))}, '
                   f'ln p(y | x) = {ln_text(lab.unconstrained.log_p)}):</p>'
                   f'<pre class="answer"><code data-testid="lab-unconstrained">'
                   f'{escape(lab.unconstrained.text)}</code></pre></div>')
    return styled(head + strip + choices_html(lab) + branches_html(lab) + comparison_html(lab) + compare + "</div>")
