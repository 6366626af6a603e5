"""Python's own error messages, written for readers in the current language: ``re``'s, which the
masker quotes for a schema's invalid ``pattern`` (:func:`re_message`), and ``json``'s, for a schema
that is not JSON (:func:`json_message`); each without its position (the caret shows the place).
These are not the masker's messages, which have codes (:mod:`~lesson.laboratorio.error_catalog`):
Python's come as text only, so they are recognised by their English words, and put in words for
readers (Spanish ids, English in ``laboratorio.po``), as the catalog's are.
"""

from __future__ import annotations

import re

from ..i18n import N_, _


# Python's ``re`` messages (re._parser), quoted by the masker for a schema's invalid ``pattern``,
# each without its " at position N" (the caret shows the place)
RE_MESSAGES = [
    (r"missing \), unterminated subpattern", N_("falta «)»: el grupo que se abre aquí no se cierra")),
    (r"missing \), unterminated comment", N_("falta «)»: el comentario «(?#...» no se cierra")),
    (r"unterminated character set", N_("falta «]»: la clase que se abre aquí («[») no se cierra")),
    (r"nothing to repeat", N_("aquí no hay nada que repetir")),
    (r"multiple repeat", N_("dos cuantificadores seguidos")),
    (r"unbalanced parenthesis", N_("sobra este «)»: no hay ningún grupo abierto")),
    (r"bad character range (.+)-(.+)", N_("el rango «{0}-{1}» está al revés")),
    (r"bad escape \(end of pattern\)", N_("el patrón acaba en una barra invertida «\\» sola")),
    (r"bad escape (.+)", N_("el escape «{0}» no existe")),
    (r"incomplete escape (.+)", N_("el escape «{0}» está incompleto")),
    (r"octal escape value (.+) outside of range 0-0o377", N_("el escape octal «{0}» pasa de \\377")),
    (r"min repeat greater than max repeat", N_("en la repetición, el mínimo es mayor que el máximo")),
    (r"the repetition number is too large", N_("un número de repeticiones es demasiado grande")),
    (r"missing group name", N_("falta el nombre del grupo")),
    (r"missing -, : or \)", N_("después de las opciones en línea «(?...» falta «-», «:» o «)»")),
    (r"missing flag", N_("falta la opción en línea después de «(?»")),
    (r"missing (.), unterminated name", N_("falta «{0}»: el nombre del grupo no se cierra")),
    (r"missing (.+)", N_("falta «{0}»")),
    (r"bad character in group name (.+)", N_("el nombre de grupo {0} tiene un carácter que no vale")),
    (r"unknown group name (.+)", N_("no hay ningún grupo llamado {0}")),
    (r"redefinition of group name (.+) as group \d+; was group \d+", N_("el nombre de grupo {0} se repite")),
    (r"invalid group reference (\d+)", N_("no hay grupo {0} al que referirse")),
    (r"cannot refer to an open group", N_("no se puede referir a un grupo que aún no se ha cerrado")),
    (r"cannot refer to group defined in the same lookbehind subpattern",
     N_("no se puede referir a un grupo de la misma búsqueda hacia atrás")),
    (r"bad group number", N_("número de grupo no válido")),
    (r"conditional backref with more than two branches", N_("el grupo condicional tiene más de dos ramas")),
    (r"unknown extension (.+)", N_("la extensión «({0}» no existe")),
    (r"unknown flag", N_("opción en línea desconocida")),
    (r"bad inline flags: .*", N_("opciones en línea incompatibles")),
    (r"global flags not at the start of the expression", N_("las opciones globales no están al principio")),
    (r"undefined character name (.+)", N_("ningún carácter de Unicode se llama {0}")),
    (r"unexpected end of pattern", N_("el patrón se acaba antes de tiempo")),
    (r"too many groups", N_("demasiados grupos")),
    (r"look-behind requires fixed-width pattern", N_("la búsqueda hacia atrás necesita un ancho fijo")),
]


def re_message(text: str) -> str:
    """One of Python ``re``'s error messages without its position, in the current language (an
    unknown one keeps Python's words as a labelled detail)."""
    core = re.sub(r" at position \d+( \(line \d+, column \d+\))?$", "", text)
    for pattern, spanish in RE_MESSAGES:
        match = re.fullmatch(pattern, core, re.DOTALL)
        if match:
            return _(spanish).format(*match.groups())
    return _("el analizador de expresiones de Python no la acepta (detalle de Python, en inglés: {core})").format(
        core=core)


# Python's ``json`` decoder messages (json.decoder and its C scanner), for a schema that is not JSON
JSON_MESSAGES = {
    "Expecting value": N_("aquí se espera un valor (un objeto, una lista, una cadena, un número, true, false o null)"),
    "Expecting ',' delimiter": N_("aquí falta una coma «,» entre dos elementos (o sobra lo que sigue)"),
    "Expecting ':' delimiter": N_("aquí faltan los dos puntos «:» entre la clave y su valor"),
    "Expecting property name enclosed in double quotes": N_("aquí se espera el nombre de una propiedad entre "
                                                         "comillas dobles, \"así\" (o sobra una coma)"),
    "Unterminated string starting at": N_("la cadena que empieza aquí no se cierra: falta su «\"»"),
    "Invalid control character at": N_("un carácter de control (un salto de línea o un tabulador) no puede ir "
                                    "dentro de una cadena: escríbelo como \\n o \\t"),
    "Invalid \\escape": N_("este escape no existe en JSON (valen \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)"),
    "Invalid \\uXXXX escape": N_("escape «\\u» mal formado: van exactamente 4 cifras hexadecimales"),
    "Extra data": N_("sobra texto después del esquema: el JSON ya terminó antes"),
    "Illegal trailing comma before end of object": N_("sobra la coma antes de «}»"),
    "Illegal trailing comma before end of array": N_("sobra la coma antes de «]»"),
}


def json_message(msg: str) -> str:
    """A ``json.JSONDecodeError.msg`` in the current language (its variants with the character
    found, such as "Invalid control character '\\n' at", included); an unknown one keeps Python's
    words as a labelled detail."""
    if msg in JSON_MESSAGES:
        return _(JSON_MESSAGES[msg])
    for english, spanish in JSON_MESSAGES.items():
        head = english.removesuffix(" at")
        if msg.startswith(head):
            return _(spanish)
    return _("el analizador de JSON no lo acepta (detalle de Python, en inglés: {msg})").format(msg=msg)
