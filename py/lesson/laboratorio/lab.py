"""The «Laboratorio»: any constraint on the mini-GPT, driven from a form instead of code.

The page's form sends its fields here (:class:`Lab`); every action returns the HTML of the whole
view, rendered by the same ``_repr_html_`` views as the lessons. Nothing here is specific to the
page: a cell can build a ``Lab`` and call the same methods.

- :func:`compile_constraint`: the form's kind and text to a masker grammar, with the masker's own
  errors (position, caret, fix) and JSON errors (line, column) as :class:`ConstraintError`.
- :class:`Lab`: a :class:`~lesson.sampling.Decoder` with ``generate`` (to the end), ``step``
  (one token) and ``pick`` (the reader's token), and :meth:`Lab.view`.
- :func:`refused_at`: why a token is not allowed: the first of its bytes the grammar refuses.
- :data:`PRESETS`: constraints and prompts to start from (and, for some, settings: a seed or a
  budget that the page applies with them).

Test hooks of the view: ``[data-testid=lab-output]`` (``data-text``, ``data-accepted``,
``data-state``), one ``[data-testid=lab-position]`` per token, ``[data-testid=lab-allowed-token]``
buttons with ``data-token-id`` in the open position's detail, ``[data-testid=lab-error]``.
"""

from __future__ import annotations

import json
import math
from html import escape

import numpy as np

from masker import MaskerError, compile_cfg, compile_choice, compile_json_schema, compile_regex
from masker.errors import caret_display

from ..course import NAMES, PROMPT, answer
from ..numbers import es_decimal, es_prob, es_sci_log
from ..sampling import Decoder
from ..views import KIND_NAMES, PositionsView, status_html, styled, token_html

KINDS = ("none", "choice", "regex", "json_schema", "gbnf")

PRESETS: dict[str, dict] = {
    "nombres": {"title": "Los nombres de «La máscara»", "kind": "choice",
                "constraint": "\n".join(answer(n) for n in NAMES), "prompt": PROMPT},
    "etiquetas": {"title": "Clasificar con etiquetas", "kind": "choice",
                  "constraint": "aprobado\nrechazado\nrevisión",
                  "prompt": "La solicitud de la señora quedó en estado: "},
    "fecha": {"title": "Una fecha en español", "kind": "regex",
              "constraint": r"([1-9]|[12][0-9]|3[01]) de (enero|febrero|marzo|abril|mayo|junio|julio"
                            r"|agosto|septiembre|octubre|noviembre|diciembre) de 1[89][0-9]{2}",
              "prompt": "Aquella tarde, que era el "},
    "telefono": {"title": "Un número de teléfono", "kind": "regex",
                 "constraint": r"\+34 [6-9][0-9]{2} [0-9]{3} [0-9]{3}",
                 "prompt": "Apunte usted el número de la casa: "},
    "conjugacion": {"title": "Un registro de conjugación (JSON Schema)", "kind": "json_schema",
                    "constraint": json.dumps({
                        "type": "object",
                        "properties": {
                            "infinitivo": {"type": "string", "pattern": "^[a-zñ]{2,10}(ar|er|ir)$"},
                            "persona": {"enum": ["yo", "tú", "él", "nosotros", "vosotros", "ellos"]},
                            "tiempo": {"enum": ["presente", "pretérito", "futuro"]},
                            "forma": {"type": "string", "maxLength": 12}},
                        "required": ["infinitivo", "persona", "tiempo", "forma"],
                        "additionalProperties": False}, ensure_ascii=False, indent=2),
                    "prompt": "Conjuga el verbo que dice Benina. Responde en JSON.\n"},
    "arbol": {"title": "Un árbol recursivo (JSON Schema con $ref)", "kind": "json_schema",
              "constraint": json.dumps({
                  "$defs": {"nodo": {
                      "type": "object",
                      "properties": {"nombre": {"type": "string", "maxLength": 10},
                                     "hijos": {"type": "array", "items": {"$ref": "#/$defs/nodo"},
                                               "maxItems": 2}},
                      "required": ["nombre"], "additionalProperties": False}},
                  "$ref": "#/$defs/nodo"}, ensure_ascii=False, indent=2),
              "prompt": "La familia de doña Paca, en JSON.\n",
              # a tree can grow past any budget (seeds 0 and 2 do): this seed closes it in 29 tokens
              "settings": {"seed": 1, "max_tokens": 200}},
    "aritmetica": {"title": "Aritmética (gramática GBNF)", "kind": "gbnf",
                   "constraint": 'root ::= term (op term){0,3}\n'
                                 'term ::= num | "(" num op num ")"\n'
                                 'num  ::= [1-9] [0-9]{0,2}\n'
                                 'op   ::= " + " | " - " | " * "',
                   "prompt": "La cuenta de la compra era "},
    "parentesis": {"title": "Paréntesis equilibrados (ningún JSON Schema lo expresa)", "kind": "gbnf",
                   "constraint": 'root ::= "(" root ")" | "x"',
                   "prompt": "Benina escribió "},
}


class ConstraintError(ValueError):
    """The constraint cannot be compiled. ``message``: what and where (with a caret line);
    ``hint``: how to fix it, or ""."""

    def __init__(self, message: str, hint: str = ""):
        self.message, self.hint = message, hint
        super().__init__(message + (f"\n  fix: {hint}" if hint else ""))


def compile_constraint(kind: str, text: str):
    """The form's constraint as a masker Grammar (None for kind "none").

    kind: one of KINDS; text: the constraint as typed (choice: one text per line, blank lines
    ignored; json_schema: the schema as JSON). Raises ConstraintError with the masker's message
    (position, caret and fix) or the JSON parser's (line, column), ValueError for an unknown kind.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, found {kind!r}")
    try:
        if kind == "none":
            return None
        if kind == "choice":
            texts = [line for line in text.split("\n") if line.strip()]
            if not texts:
                raise ConstraintError("la lista de opciones está vacía", "escribe una opción por línea")
            return compile_choice(texts)
        if kind == "regex":
            return compile_regex(text)
        if kind == "json_schema":
            try:
                schema = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ConstraintError(f"JSON no válido en la línea {exc.lineno}, columna {exc.colno}: "
                                      f"{exc.msg}\n{caret_display(text, exc.pos)}",
                                      "revisa comillas, comas y llaves") from None
            return compile_json_schema(schema)
        return compile_cfg(text)
    except MaskerError as exc:
        raise ConstraintError(str(exc).split("\n  fix: ")[0], getattr(exc, "hint", "") or "") from None


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


class Lab:
    """One experiment: a constraint, a prompt and sampling settings, and its generation.

    model, tok: the mini-GPT and its tokenizer. kind/constraint: see :func:`compile_constraint`
    (errors are raised here, before any model work). The other arguments are those of
    :func:`lesson.sampling.generate` (``stop_at_accept``: stop at the first complete text, for
    grammars whose texts can always go on). ``compare=True`` also runs the same seed without the
    constraint, side by side.
    """

    def __init__(self, model, tok, *, kind: str = "choice", constraint: str = "", prompt: str = PROMPT,
                 seed: int = 0, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None, max_tokens: int | None = 120, stop_at_accept: bool = False,
                 compare: bool = False):
        self.model, self.tok = model, tok
        self.grammar = compile_constraint(kind, constraint)
        self.kind = kind
        self.settings = {"seed": seed, "temperature": temperature, "top_k": top_k, "top_p": top_p,
                         "max_tokens": max_tokens}
        self.prompt, self.compare = prompt, compare
        self.decoder = Decoder(model, tok, prompt, self.grammar, stop_at_accept=stop_at_accept,
                               **self.settings)
        self.unconstrained = None
        self.selected: int | None = None  # 1-based position open in the detail
        self.note = ""  # said once in the summary (e.g. why a new experiment started)

    def generate(self) -> "Lab":
        """Run to the end (and the comparison, if asked)."""
        while not self.decoder.done:
            self.decoder.step()
        self.selected = None
        return self._compare_when_done()

    def step(self) -> "Lab":
        """One more token, sampled; the new position opens in the detail."""
        if self.decoder.generation.positions:
            self.note = ""
        if not self.decoder.done:
            self.decoder.step()
        self.selected = len(self.decoder.generation.positions)
        return self._compare_when_done()

    def pick(self, token_id: int) -> "Lab":
        """The reader's token for the next position (it must be allowed: ValueError otherwise)."""
        self.decoder.step(token_id=int(token_id))
        self.selected = len(self.decoder.generation.positions)
        return self._compare_when_done()

    def _compare_when_done(self) -> "Lab":
        """With ``compare``, a generation finished step by step gets its unconstrained twin too."""
        if self.decoder.done and self.compare and self.grammar is not None and self.unconstrained is None:
            other = Decoder(self.model, self.tok, self.prompt, None, **self.settings)
            while not other.done:
                other.step()
            self.unconstrained = other.generation
        return self

    @property
    def state(self) -> str:
        return "done" if self.decoder.done else "idle"

    def _next_html(self) -> str:
        """The next position's choices: the allowed tokens as buttons (click to pick one), and the
        model's most probable removed tokens greyed, each with the first byte the grammar refuses."""
        if self.decoder.done:
            return ""
        p = self.decoder.next_distribution()
        vocab = self.tok.vocab
        matcher = self.decoder.matcher
        order = np.argsort(-p, kind="stable")
        mask = np.ones(len(p), dtype=bool) if matcher is None else matcher.mask()
        allowed = [t for t in order.tolist() if mask[t]][:12]
        removed = [t for t in order[:8].tolist() if not mask[t]]
        kept = float(p[mask].sum())
        buttons = "".join(
            f'<li><button type="button" class="lab-token" data-testid="lab-allowed-token" data-token-id="{t}" '
            f'aria-label="elegir el token {escape(repr(vocab[t].decode("utf-8", "replace")))}">'
            f'{token_html(vocab, t)} <span class="pq">{es_prob(float(p[t]) / kept)}</span></button></li>'
            for t in allowed)
        refusals = []
        for t in removed:
            i = refused_at(matcher, t)
            byte = vocab[t][i]
            refusals.append(f'<li>{token_html(vocab, t, "removed")} <span class="pq">p {es_prob(float(p[t]))}; '
                            f'la gramática rechaza su byte {i + 1} (0x{byte:02X})</span></li>')
        out = (f'<div class="lab-next"><p><strong>Siguiente posición</strong>: elige tú el token '
               f'(los permitidos más probables, con q̃ tras la máscara), o pulsa «Paso».</p>'
               f'<ol class="lab-choices">{buttons}</ol>')
        if refusals:
            out += f'<p>Quitados por la máscara:</p><ol class="lab-refused">{"".join(refusals)}</ol>'
        return out + "</div>"

    def view(self) -> str:
        """The whole view as HTML: the verdict, the per-position strip and detail, the next
        position's choices and, with ``compare``, the unconstrained generation."""
        gen = self.decoder.generation
        accepted = self.grammar.accepts(gen.bytes) if self.grammar is not None else True
        verdict = []
        if self.decoder.done and self.grammar is not None:
            verdict.append("la gramática lo acepta" if accepted else "la gramática no lo acepta")
            if self.kind == "json_schema":
                try:
                    json.loads(gen.text)
                    verdict.append("json.loads lo lee")
                except ValueError:
                    verdict.append("json.loads no lo lee")
        logs = f"ln p(y | x) = {es_decimal(gen.log_p, 2)}" if gen.positions else ""
        if gen.positions and self.grammar is not None:
            logs += (f" · ln q̃(y | x) = {es_decimal(gen.log_q, 2) if math.isfinite(gen.log_q) else '−∞'}"
                     f" · masa conservada en todo el camino {es_sci_log(gen.log_kept)}")
        status = status_html(gen) if self.decoder.done else "en curso"
        kind = KIND_NAMES.get(self.grammar.kind, "") if self.grammar is not None else "sin restricción"
        head = (f'<div class="lab-output" data-testid="lab-output" data-text="{escape(gen.text)}" '
                f'data-accepted="{str(accepted).lower()}" data-state="{self.state}">'
                f'<p class="lab-summary">{" · ".join(x for x in [self.note, escape(kind), f"{len(gen.token_ids)} tokens", logs, status, *verdict] if x)}</p>'
                f'<pre class="answer"><code>{escape(gen.text)}</code></pre>')
        strip = ""
        if gen.positions:
            strip = PositionsView(gen, uid="lab", open_at=self.selected,
                                  entry_testid="lab-position")._repr_html_()
        compare = ""
        if self.unconstrained is not None:
            compare = (f'<div class="lab-compare"><p><strong>La misma semilla sin restricción</strong> '
                       f'({len(self.unconstrained.token_ids)} tokens):</p>'
                       f'<pre class="answer"><code data-testid="lab-unconstrained">'
                       f'{escape(self.unconstrained.text)}</code></pre></div>')
        return styled(head + strip + self._next_html() + compare + "</div>")

    def _repr_html_(self) -> str:
        return self.view()


def error_html(error: ConstraintError) -> str:
    """A compile error in place: the message with its caret line and the fix, no traceback."""
    hint = f'<p class="lab-hint">Cómo arreglarlo: {escape(error.hint)}</p>' if error.hint else ""
    return styled(f'<div class="lab-error" data-testid="lab-error" role="alert">'
                  f'<p><strong>No se puede usar esta restricción o estos ajustes.</strong> El mensaje '
                  f'del enmascarador (en inglés, como los de Python) dice dónde y por qué:</p>'
                  f'<pre>{escape(error.message)}</pre>{hint}</div>')


class _Html:
    """Any HTML string as a displayable object (a cell shows its ``_repr_html_``)."""

    def __init__(self, html: str):
        self.html = html

    def _repr_html_(self) -> str:
        return self.html


_SESSION: dict = {"lab": None, "key": None, "model": None, "tok": None}
SETTINGS = ("kind", "constraint", "prompt", "seed", "temperature", "top_k", "top_p", "max_tokens",
            "stop_at_accept", "compare")


def act(action: str, state, token_id: int | None = None):
    """What the page's form asks for, as a displayable view; the page runs ``act(...)`` as a cell.

    action: "generate" (a new experiment, run to the end), "step" (one more token, starting a new
    experiment when the settings changed or the last one is done) or "pick" (the reader's token,
    ``token_id``, for the next position). state: the form's fields (a dict, or its JSON), keys of
    SETTINGS. Compile and settings errors come back as the error view, never as a traceback.
    The model and tokenizer are loaded once.
    """
    if isinstance(state, str):
        state = json.loads(state)
    if _SESSION["model"] is None:
        from minigpt.bpe import load_tokenizer
        from minigpt.gpt import load_model
        _SESSION["tok"], _SESSION["model"] = load_tokenizer(), load_model()
    settings = {k: state[k] for k in SETTINGS if k in state}
    key = json.dumps(settings, sort_keys=True)
    lab = _SESSION["lab"]
    try:
        if action == "generate" or lab is None or (action == "step" and (key != _SESSION["key"] or lab.decoder.done)):
            if action == "pick":
                raise ValueError("no hay ninguna generación en curso: pulsa «Paso» o «Generar»")
            renewed = action == "step" and lab is not None and not lab.decoder.done
            lab = Lab(_SESSION["model"], _SESSION["tok"], **settings)
            if renewed:
                lab.note = "nuevo experimento: cambiaron los ajustes"
            _SESSION["lab"], _SESSION["key"] = lab, key
            if action == "generate":
                return lab.generate()
            return lab.step()
        if action == "step":
            return lab.step()
        if action == "pick":
            return lab.pick(int(token_id))
        raise ValueError(f"unknown action {action!r} (generate, step or pick)")
    except ConstraintError as error:
        _SESSION["lab"] = None
        return _Html(error_html(error))
    except (ValueError, MaskerError) as error:
        return _Html(error_html(ConstraintError(str(error))))


__all__ = ["act", "ConstraintError", "KINDS", "Lab", "PRESETS", "compile_constraint",
           "error_html", "refused_at"]
