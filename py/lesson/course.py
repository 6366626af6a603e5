"""The course's shared facts: the running prompt, the five names, the JSON key and the answers.

«La máscara» introduces them; «Niveles de garantía», «Corregir la distorsión», the «Laboratorio»
and the tests use the same ones. The names are five characters of *Misericordia* (Galdós, 1897).
"""

from __future__ import annotations

import json

PROMPT = "¿Quién es la protagonista? Responde en JSON.\n"
NAMES = ["Benina", "Almudena", "Frasquito", "Obdulia", "Juliana"]
# The JSON key, short on purpose: every path of G goes through one token split of the key, and
# "personaje", the other natural key, has 24 splits against 9 for "nombre" (744 paths and 3,429
# model positions in the exact enumeration, against 279 and 1,277).
KEY, OTHER_KEY = "nombre", "personaje"
PROTAGONIST = "Benina"  # of Misericordia (Galdós, 1897)


def answer(name: str, spaced: bool = False, key: str = KEY) -> str:
    """The JSON text for one name: compact ``{"nombre":"Benina"}`` (or with spaces, as json.dumps
    writes it by default)."""
    separators = (", ", ": ") if spaced else (",", ":")
    return json.dumps({key: name}, ensure_ascii=False, separators=separators)


def name_of(text) -> str:
    """The name in one of the answer texts (str or bytes); KeyError if it has no KEY."""
    return json.loads(text)[KEY]
