"""Python's own error messages, put in Spanish for the «Laboratorio»'s Spanish edition: ``re``'s,
which the masker quotes for a schema's invalid ``pattern`` (:func:`re_message`), and ``json``'s,
for a schema that is not JSON (:func:`json_message`). The English edition shows Python's words
(without ``re``'s " at position N": the caret shows the place). These are not the masker's
messages, which have codes (:mod:`~lesson.laboratorio.error_catalog`): Python's come as text only,
so they are recognised by their English words.
"""

from __future__ import annotations

import re

from ..i18n import get_language


# Python's ``re`` messages (re._parser), quoted by the masker for a schema's invalid ``pattern``,
# each without its " at position N" (the caret shows the place)
RE_MESSAGES = [
    (r"missing \), unterminated subpattern", "falta «)»: el grupo que se abre aquí no se cierra"),
    (r"missing \), unterminated comment", "falta «)»: el comentario «(?#...» no se cierra"),
    (r"unterminated character set", "falta «]»: la clase que se abre aquí («[») no se cierra"),
    (r"nothing to repeat", "aquí no hay nada que repetir"),
    (r"multiple repeat", "dos cuantificadores seguidos"),
    (r"unbalanced parenthesis", "sobra este «)»: no hay ningún grupo abierto"),
    (r"bad character range (.+)-(.+)", "el rango «{0}-{1}» está al revés"),
    (r"bad escape \(end of pattern\)", "el patrón acaba en una barra invertida «\\» sola"),
    (r"bad escape (.+)", "el escape «{0}» no existe"),
    (r"incomplete escape (.+)", "el escape «{0}» está incompleto"),
    (r"octal escape value (.+) outside of range 0-0o377", "el escape octal «{0}» pasa de \\377"),
    (r"min repeat greater than max repeat", "en la repetición, el mínimo es mayor que el máximo"),
    (r"the repetition number is too large", "un número de repeticiones es demasiado grande"),
    (r"missing group name", "falta el nombre del grupo"),
    (r"missing -, : or \)", "después de las opciones en línea «(?...» falta «-», «:» o «)»"),
    (r"missing flag", "falta la opción en línea después de «(?»"),
    (r"missing (.), unterminated name", "falta «{0}»: el nombre del grupo no se cierra"),
    (r"missing (.+)", "falta «{0}»"),
    (r"bad character in group name (.+)", "el nombre de grupo {0} tiene un carácter que no vale"),
    (r"unknown group name (.+)", "no hay ningún grupo llamado {0}"),
    (r"redefinition of group name (.+) as group \d+; was group \d+", "el nombre de grupo {0} se repite"),
    (r"invalid group reference (\d+)", "no hay grupo {0} al que referirse"),
    (r"cannot refer to an open group", "no se puede referir a un grupo que aún no se ha cerrado"),
    (r"cannot refer to group defined in the same lookbehind subpattern",
     "no se puede referir a un grupo de la misma búsqueda hacia atrás"),
    (r"bad group number", "número de grupo no válido"),
    (r"conditional backref with more than two branches", "el grupo condicional tiene más de dos ramas"),
    (r"unknown extension (.+)", "la extensión «({0}» no existe"),
    (r"unknown flag", "opción en línea desconocida"),
    (r"bad inline flags: .*", "opciones en línea incompatibles"),
    (r"global flags not at the start of the expression", "las opciones globales no están al principio"),
    (r"undefined character name (.+)", "ningún carácter de Unicode se llama {0}"),
    (r"unexpected end of pattern", "el patrón se acaba antes de tiempo"),
    (r"too many groups", "demasiados grupos"),
    (r"look-behind requires fixed-width pattern", "la búsqueda hacia atrás necesita un ancho fijo"),
]


def re_message(text: str) -> str:
    """One of Python ``re``'s error messages without its position: in Spanish on the Spanish
    edition (an unknown one keeps its English words as a labelled detail), as Python wrote it on
    the English edition."""
    core = re.sub(r" at position \d+( \(line \d+, column \d+\))?$", "", text)
    if get_language() == "en":
        return core
    for pattern, spanish in RE_MESSAGES:
        match = re.fullmatch(pattern, core, re.DOTALL)
        if match:
            return spanish.format(*match.groups())
    return f"el analizador de expresiones de Python no la acepta (detalle de Python, en inglés: {core})"


# Python's ``json`` decoder messages (json.decoder and its C scanner), for a schema that is not JSON
JSON_MESSAGES = {
    "Expecting value": "aquí se espera un valor (un objeto, una lista, una cadena, un número, true, false o null)",
    "Expecting ',' delimiter": "aquí falta una coma «,» entre dos elementos (o sobra lo que sigue)",
    "Expecting ':' delimiter": "aquí faltan los dos puntos «:» entre la clave y su valor",
    "Expecting property name enclosed in double quotes": "aquí se espera el nombre de una propiedad entre "
                                                         "comillas dobles, \"así\" (o sobra una coma)",
    "Unterminated string starting at": "la cadena que empieza aquí no se cierra: falta su «\"»",
    "Invalid control character at": "un carácter de control (un salto de línea o un tabulador) no puede ir "
                                    "dentro de una cadena: escríbelo como \\n o \\t",
    "Invalid \\escape": "este escape no existe en JSON (valen \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)",
    "Invalid \\uXXXX escape": "escape «\\u» mal formado: van exactamente 4 cifras hexadecimales",
    "Extra data": "sobra texto después del esquema: el JSON ya terminó antes",
    "Illegal trailing comma before end of object": "sobra la coma antes de «}»",
    "Illegal trailing comma before end of array": "sobra la coma antes de «]»",
}


def json_message(msg: str) -> str:
    """A ``json.JSONDecodeError.msg`` in Spanish (its variants with the character found, such as
    "Invalid control character '\\n' at", included), on the Spanish edition; an unknown one keeps
    its English words as a labelled detail. On the English edition, ``msg`` as Python wrote it."""
    if get_language() == "en":
        return msg
    if msg in JSON_MESSAGES:
        return JSON_MESSAGES[msg]
    for english, spanish in JSON_MESSAGES.items():
        head = english.removesuffix(" at")
        if msg.startswith(head):
            return spanish
    return f"el analizador de JSON no lo acepta (detalle de Python, en inglés: {msg})"
