"""The «Laboratorio» in CPython: every preset gives a text its grammar accepts (checked again
with re / jsonschema / the masker), compile errors carry position and fix, a picked token is
taken, and the first refused byte of a removed token is the one the grammar refuses."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import jsonschema
import pytest

from lesson.laboratorio.lab import (PRESETS, ConstraintError, Lab, compile_constraint, error_html,
                                    refused_at)


class Hooks(HTMLParser):
    def __init__(self):
        super().__init__()
        self.items: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "data-testid" in attrs:
            self.items.append(attrs)


def hooks(html: str, testid: str) -> list[dict]:
    parser = Hooks()
    parser.feed(html)
    return [h for h in parser.items if h["data-testid"] == testid]


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_gives_a_text_its_grammar_accepts(model, tok, name):
    preset = PRESETS[name]
    settings = {"seed": 0, "max_tokens": 120, **preset.get("settings", {})}  # what the page applies
    lab = Lab(model, tok, kind=preset["kind"], constraint=preset["constraint"], prompt=preset["prompt"],
              **settings).generate()
    gen = lab.decoder.generation
    assert gen.complete, (name, gen.text)
    (output,) = hooks(lab.view(), "lab-output")
    assert output["data-text"] == gen.text and output["data-accepted"] == "true"
    assert output["data-state"] == "done"
    assert len(hooks(lab.view(), "lab-position")) == len(gen.positions)
    if preset["kind"] == "regex":
        assert re.fullmatch(preset["constraint"], gen.text)
    elif preset["kind"] == "json_schema":
        jsonschema.validate(json.loads(gen.text), json.loads(preset["constraint"]))
    elif preset["kind"] == "choice":
        assert gen.text in preset["constraint"].split("\n")
    assert lab.grammar.accepts(gen.bytes)


@pytest.mark.parametrize("kind, text, where, key, span", [
    # one line: «en el carácter N», N from 1; several lines: «en la línea L, columna C», from 1 too
    ("regex", "(ab", "en el carácter 1: falta «)»", "regex.unclosed_group", "("),
    ("json_schema", '{"type": "object",,}', "JSON no válido en el carácter 19", "json", ","),
    ("gbnf", 'root ::= "a" | (', "en el carácter 16", "gbnf.unclosed_group", "("),
    ("choice", "\n\n", "vacía", "empty", None),
    ("json_schema", '{"type": "string", "format": "color"}', "el formato «color» no está soportado",
     "schema.unsupported_format", '"format"'),
    # the misleading diagnoses: an unclosed class, an invalid pattern, a contradiction, an
    # unsupported keyword placed in the schema's text, an empty constraint
    ("gbnf", "root ::= [a-", "falta «]»", "gbnf.unclosed_class", "["),
    ("json_schema", '{"type": "string", "pattern": "(abc"}', "«pattern» no es una expresión regular válida",
     "schema.bad_pattern", "("),  # the character re points at, inside the pattern's string
    ("json_schema", '{"type": "integer",\n "minimum": 10,\n "maximum": 5}',
     "línea 3, columna 2: ningún valor JSON cumple este esquema: «minimum» vale 10 y «maximum» vale 5",
     "schema.unsatisfiable", '"maximum"'),
    ("json_schema", '{"type": "object",\n  "unevaluatedProperties": false}',
     "línea 2, columna 3: la palabra clave «unevaluatedProperties»", "schema.unsupported",
     '"unevaluatedProperties"'),
    ("regex", "", "vacía", "empty", None), ("gbnf", "  ", "vacía", "empty", None),
])
def test_compile_errors_are_in_spanish_and_name_the_place(kind, text, where, key, span):
    with pytest.raises(ConstraintError) as info:
        compile_constraint(kind, text)
    error = info.value
    assert where in error.message and error.kind == key, error.message
    assert error.hint and not any(word in error.message + error.hint for word in (" the ", "missing", "fix:"))
    if span is None:
        assert error.span is None
    else:
        assert text[error.span[0]:error.span[1]] == span and "^" in error.message
    html = error_html(error)
    assert 'data-testid="lab-error"' in html and "Traceback" not in html and f'data-kind="{key}"' in html


def test_the_pointer_of_a_schema_keyword_is_found_in_the_text():
    from lesson.laboratorio.text_places import pointer_span
    text = '{"a": [1, {"b": {"if": 2}}],\n "if": 3}'
    for pointer, expected in [("#/if", '"if"'), ("#/a/1/b/if", '"if"'), ("#/a/1", '{"b": {"if": 2}}'), ("#", "{")]:
        start, end = pointer_span(text, pointer)
        assert text[start:end] == expected, pointer
    assert pointer_span(text, "#/missing") == (0, 1)


def test_stepping_and_picking_continue_from_the_readers_token(model, tok):
    preset = PRESETS["etiquetas"]
    lab = Lab(model, tok, kind="choice", constraint=preset["constraint"], prompt=preset["prompt"])
    buttons = hooks(lab.view(), "lab-allowed-token")
    ids = [int(b["data-token-id"]) for b in buttons]
    firsts = {tok.vocab[t][:1] for t in ids}
    assert firsts <= {b"a", b"r"}  # aprobado, rechazado, revisión
    pick = next(t for t in ids if tok.vocab[t].startswith(b"r"))
    lab.pick(pick)
    assert lab.decoder.generation.token_ids == [pick]
    lab.generate()
    assert lab.decoder.generation.text in ("rechazado", "revisión")


def test_a_refused_token_reports_its_first_refused_byte(tok):
    grammar = compile_constraint("regex", "ab[0-9]")
    matcher = grammar.matcher(tok.vocab)
    matcher.consume_bytes("a")
    assert refused_at(matcher, tok.vocab.index(b"b")) is None
    assert refused_at(matcher, tok.vocab.index(b"x")) == 0
    two = next(t for t, piece in enumerate(tok.vocab) if len(piece) == 2 and piece[:1] == b"b"
               and not piece[1:].isdigit())
    assert refused_at(matcher, two) == 1


def test_compare_runs_the_same_seed_without_the_constraint(model, tok):
    lab = Lab(model, tok, kind="regex", constraint="[a-z]{3}", seed=3, max_tokens=10, compare=True).generate()
    (other,) = hooks(lab.view(), "lab-unconstrained")
    assert lab.unconstrained is not None and len(lab.unconstrained.token_ids) == 10


def test_the_page_action_keeps_one_experiment_and_returns_views(model, tok):
    from lesson.laboratorio.protocol import act
    state = {"kind": "regex", "constraint": "[a-z]{2} [0-9]", "prompt": "La señora ", "seed": 0,
             "temperature": 1.0, "top_k": None, "top_p": None, "max_tokens": 20}
    first = act("step", json.dumps(state))
    (out,) = hooks(first._repr_html_(), "lab-output")
    assert out["data-state"] == "idle" and len(hooks(first._repr_html_(), "lab-position")) == 1
    token = int(hooks(first._repr_html_(), "lab-allowed-token")[0]["data-token-id"])
    second = act("pick", state, token_id=token)
    assert second is first and first.decoder.generation.token_ids[-1] == token
    long = {**state, "constraint": "[a-z]{12}"}
    begun = act("step", long)
    assert not begun.decoder.done
    renewed = act("step", {**long, "seed": 1})  # settings changed mid-way: a new experiment, said so
    assert renewed is not begun and "nuevo experimento" in renewed._repr_html_()
    done = act("generate", state)
    assert done is not first and done.decoder.done
    bad = act("generate", {**state, "constraint": "[a-z"})
    assert hooks(bad._repr_html_(), "lab-error")
    assert hooks(act("pick", state, token_id=3)._repr_html_(), "lab-error")  # nothing in progress
    assert hooks(act("generate", {**state, "temperature": 0})._repr_html_(), "lab-error")
