"""The «Laboratorio»'s presets (:data:`PRESETS`): constraints and prompts to start from (and, for
some, settings: a seed or a budget that the page applies with them), and their titles in the
current language (:func:`preset_titles`).
"""

from __future__ import annotations

import json



from ..course import NAMES, PROMPT, answer
from ..i18n import _


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
    "parentesis": {"title": "Paréntesis equilibrados (ninguna expresión regular, y por tanto ningún «pattern», "
                            "lo expresa)", "kind": "gbnf",
                   "constraint": 'root ::= "(" root ")" | "x"',
                   "prompt": "Benina escribió "},
}



def preset_titles() -> dict[str, str]:
    """Each preset's title (:data:`PRESETS`' ``title``) in the current language, by key. The
    presets' prompts and texts stay Spanish in both editions: the model was trained on Spanish."""
    titles = {"nombres": _("Los nombres de «La máscara»"), "etiquetas": _("Clasificar con etiquetas"),
              "fecha": _("Una fecha en español"), "telefono": _("Un número de teléfono"),
              "conjugacion": _("Un registro de conjugación (JSON Schema)"),
              "arbol": _("Un árbol recursivo (JSON Schema con $ref)"), "aritmetica": _("Aritmética (gramática GBNF)"),
              "parentesis": _("Paréntesis equilibrados (ninguna expresión regular, y por tanto ningún «pattern», "
                                "lo expresa)")}
    return {key: titles.get(key, preset["title"]) for key, preset in PRESETS.items()}
