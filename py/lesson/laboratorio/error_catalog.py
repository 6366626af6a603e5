"""The masker's errors as the «Laboratorio» shows them: one catalog keyed by the error's ``code``.

Every error the masker raises carries a stable ``code`` and the ``fields`` its message is made of
(:class:`masker.errors.MaskerError`). :data:`MESSAGES` gives, for each code, a message and a fix:
Spanish message ids (the course's source language, :mod:`lesson.i18n`), ``str.format`` templates
over the error's fields by name. The English edition's texts are their translations in the English
catalog ``lesson/locale/en/LC_MESSAGES/laboratorio.po``: a third language costs one more ``.po``
file, and rewording the masker's English messages changes nothing here. :func:`render` is the one
function that writes any masker error in the current language.

A field reaches its template as the masker gave it (a character, a rule name, a digit string),
unless :data:`FIELDS` says how to write it first: a number in the language's style
(:func:`lesson.numbers.fmt_number`: «20 000», "20,000"), a name quoted or the word for nothing
when it is empty, a stable id (what nests, which ``(?...)`` construct, what a value must be) put
into words. Python's own messages, which the masker quotes for a schema that is not JSON or an
invalid ``pattern``, are put in Spanish by :mod:`~lesson.laboratorio.python_messages`.

The test ``tests/lesson/laboratorio/test_laboratorio_errors.py`` finds every code the masker can
raise in its source, checks that each has an entry here and an English text, and reaches each from
a bad input; an entry no code uses fails it too.
"""

from __future__ import annotations

from masker.errors import BudgetTooSmall, LimitExceeded, MaskerError

from ..i18n import N_, _, get_language, ngettext
from ..numbers import fmt_int, fmt_number
from .python_messages import json_message, re_message
from .words import count

# code: (message, fix), Spanish ids over the error's fields by name
MESSAGES: dict[str, tuple[str, str]] = {
    "regex.nothing_to_repeat": (
        N_("no hay nada que repetir antes de «{char}»: un cuantificador va detrás de algo"),
        N_("pon «{char}» detrás de un carácter, una clase o un grupo (en una expresión regular, «\\{char}» es "
           "el carácter «{char}» literal)")),
    "regex.bad_repeat": (
        N_("la repetición {{{min},{max}}} es imposible: el mínimo es mayor que el máximo"),
        N_("escribe {{{max},{min}}}")),
    "regex.unclosed_class": (
        N_("falta «]»: la clase de caracteres que se abre aquí («[») no se cierra{bracket}"),
        N_("añade «]» al final de la clase")),
    "regex.bad_range": (
        N_("el rango «{start}-{end}» está al revés: «{start}» va después de «{end}»"),
        N_("escribe «{end}-{start}»")),
    "regex.bad_hex_escape": (
        N_("escape «\\{char}» mal formado: se esperaban {width} cifras hexadecimales y hay {found}"),
        N_("escribe «\\{char}» seguido de exactamente {width} cifras hexadecimales (0-9, a-f)")),
    "regex.beyond_unicode": (
        N_("el escape «\\{char}{digits}» pasa del último carácter de Unicode, U+10FFFF"),
        N_("usa el código de un carácter que exista")),
    "regex.unclosed_group": (
        N_("falta «)»: el grupo que se abre aquí no se cierra"),
        N_("añade «)», o escribe «\\(» si querías un paréntesis literal")),
    "regex.multiple_repeat": (
        N_("aquí van dos cuantificadores seguidos"),
        N_("deja uno solo, o pon lo que repite el primero entre paréntesis, «(?:...)», y el segundo detrás del "
           "paréntesis")),
    "gbnf.nothing_to_repeat": (
        N_("no hay nada que repetir antes de «{char}»: un cuantificador va detrás de algo"),
        N_("pon «{char}» detrás de una cadena, una clase, un nombre de regla o un grupo; un «{char}» literal se "
           "escribe «\"{char}\"»")),
    "gbnf.bad_repeat": (
        N_("la repetición {{{min},{max}}} es imposible: el mínimo es mayor que el máximo"),
        N_("escribe {{{max},{min}}}")),
    "gbnf.unclosed_class": (
        N_("falta «]»: la clase de caracteres que se abre aquí («[») no se cierra"),
        N_("añade «]» al final de la clase")),
    "gbnf.bad_range": (
        N_("el rango «{start}-{end}» está al revés: «{start}» va después de «{end}»"),
        N_("escribe «{end}-{start}»")),
    "gbnf.bad_hex_escape": (
        N_("escape «\\{char}» mal formado: se esperaban {width} cifras hexadecimales y hay {found}"),
        N_("escribe «\\{char}» seguido de exactamente {width} cifras hexadecimales (0-9, a-f)")),
    "gbnf.beyond_unicode": (
        N_("el escape «\\{char}{digits}» pasa del último carácter de Unicode, U+10FFFF"),
        N_("usa el código de un carácter que exista")),
    "gbnf.unclosed_group": (
        N_("falta «)»: el grupo que se abre aquí no se cierra"),
        N_("añade «)», o escribe «\"(\"» si querías un paréntesis literal")),
    "gbnf.multiple_repeat": (
        N_("aquí van dos cuantificadores seguidos"),
        N_("deja uno solo, o pon lo que repite el primero entre paréntesis, «(...)», y el segundo detrás del "
           "paréntesis")),
    "regex.unbalanced_paren": (
        N_("sobra este «)»: no hay ningún grupo abierto que cerrar"),
        N_("quítalo, o escribe «\\)» si querías un paréntesis literal")),
    "regex.bad_group_name": (
        N_("nombre de grupo mal escrito: se espera «(?P<nombre>...)»"),
        N_("cierra el nombre con «>»")),
    "regex.unclosed_comment": (
        N_("falta «)»: el comentario «(?#...» que se abre aquí no se cierra"),
        N_("cierra el comentario con «)»")),
    "regex.possessive": (
        N_("el cuantificador posesivo («*+», «++», «?+», «{{m,n}}+») no está soportado"),
        N_("quita el «+» que sigue al cuantificador")),
    "regex.range_ends_in_class": (
        N_("rango de caracteres mal formado: una clase como «\\d» no puede cerrar un rango"),
        N_("pon «-» al principio o al final de la clase si querías un guion literal")),
    "regex.trailing_backslash": (
        N_("la expresión acaba en una barra invertida «\\» sola"),
        N_("escribe «\\\\» para una barra invertida literal")),
    "regex.bad_named_escape": (
        N_("escape «\\N» mal formado: se espera «\\N{{NOMBRE}}»"),
        N_("escribe, por ejemplo, «\\N{{LATIN SMALL LETTER N WITH TILDE}}»")),
    "gbnf.bad_repetition": (
        N_("repetición mal escrita: se espera {{m}}, {{m,}} o {{m,n}}"),
        N_("escribe, por ejemplo, {{2,5}}")),
    "gbnf.unclosed_string": (
        N_("falta «\"»: la cadena que se abre aquí no se cierra"),
        N_("añade «\"» al final de la cadena")),
    "gbnf.no_root": (
        N_("no hay ninguna regla «root», la regla por la que empieza la gramática"),
        N_("añade una línea «root ::= ...»")),
    "gbnf.never_finishes": (
        N_("ningún texto la cumple: «root» nunca termina, porque cada una de sus alternativas vuelve a pedir "
           "una regla que no acaba"),
        N_("da a cada regla recursiva un caso base, por ejemplo root ::= \"a\" root | \"a\"")),
    "choice.empty": (
        N_("la lista de opciones está vacía"),
        N_("escribe una opción por línea")),
    "limit.nfa_states": (
        N_("la expresión regular se expande en demasiados estados de autómata"),
        N_("baja los límites de las repeticiones {{m,n}}, o divide la expresión")),
    "limit.dfa_states": (
        N_("el autómata necesita demasiados estados"),
        N_("simplifica la restricción: las repeticiones acotadas de alternativas multiplican los estados")),
    "limit.productions": (
        N_("la gramática se traduce en demasiadas producciones"),
        N_("baja los límites de las repeticiones {{m,n}}, o simplifica las reglas")),
    "limit.schema_nesting": (
        N_("el esquema anida demasiados niveles"),
        N_("aplánalo: menos allOf, anyOf o $ref unos dentro de otros")),
    "limit.schema_regex": (
        N_("la expresión regular de este esquema crece demasiado"),
        N_("simplifica el esquema")),
    "limit.mask_steps": (
        N_("calcular una máscara necesitó demasiados pasos del autómata"),
        N_("usa una gramática más pequeña")),
    "limit.budget_steps": (
        N_("recorrer los tokens de un estado necesitó demasiados pasos del autómata"),
        N_("usa una gramática más pequeña")),
    "limit.budget_states": (
        N_("la máscara que cuenta el presupuesto tuvo que visitar demasiados estados"),
        N_("usa un presupuesto menor o una gramática más estrecha")),
    "schema.unique_items_with": (
        N_("«uniqueItems» junto a «prefixItems» o «contains» no está soportado"),
        N_("quita «uniqueItems», o «prefixItems» y «contains»")),
    "schema.unique_items_set": (
        N_("«uniqueItems» solo está soportado cuando los elementos salen de un conjunto finito de valores "
           "(«enum», «const», booleanos o null)"),
        N_("da a «items» un «enum» con los valores posibles, o quita «uniqueItems»")),
    "schema.format_regex": (
        N_("el formato «regex» no está soportado: las expresiones regulares válidas anidan sus grupos a "
           "cualquier profundidad, y eso no lo comprueba ningún autómata finito"),
        N_("quita «format», o describe los textos con un «pattern»")),
    "schema.enum_cycle": (
        N_("los valores de «enum» no se pueden comprobar: los subesquemas que los acompañan se remiten unos a "
           "otros sin fin"),
        N_("quita la referencia circular de los subesquemas junto a «enum»")),
    "schema.pattern_flags": (
        N_("«pattern» usa opciones en línea como «(?i)», que no están soportadas"),
        N_("quita la opción y escribe las variantes, por ejemplo «[Aa]» en vez de «(?i)a»")),
    "schema.pattern_anchor": (
        N_("«pattern» tiene un ancla («^», «$») o un «\\b» en medio, y eso no está soportado"),
        N_("deja «^» solo al principio y «$» solo al final, y quita «\\b»")),
    "schema.max_contains": (
        N_("«maxContains» no está soportado: necesitaría los elementos que no cumplen «contains»"),
        N_("quita «maxContains»")),
    "schema.contains_prefix": (
        N_("«contains» junto con «prefixItems» no está soportado"),
        N_("quita uno de los dos")),
    "schema.contains_counts": (
        N_("«contains» junto con «maxItems», o con un «minItems» mayor que «minContains», no está soportado"),
        N_("quita «maxItems», o sube «minContains» hasta «minItems»")),
    "schema.min_properties_extra": (
        N_("«minProperties» no está soportado cuando hacen falta dos o más claves fuera de «properties» para "
           "llegar a él: una gramática no puede impedir que se repita la misma clave"),
        N_("declara en «properties» las claves que cuentas")),
    "schema.ref_recursion": (
        N_("la recursión de «$ref» a través de allOf o de palabras clave a su lado no está soportada"),
        N_("deja el $ref recursivo solo, sin otras palabras clave")),
    "schema.unsatisfiable": (
        N_("ningún valor JSON cumple este esquema"),
        N_("corrige las condiciones que se contradicen")),
    "regex.anchor_inside": (
        N_("el ancla «{char}» en medio de la expresión no está soportada: la expresión siempre tiene que "
           "coincidir con el texto entero"),
        N_("quítala: «^» solo vale al principio y «$» al final, y no hacen falta")),
    "regex.boundary": (
        N_("«\\{char}» (un límite de palabra o un ancla) no está soportado: no es un carácter"),
        N_("quítalo: la expresión siempre coincide con el texto entero")),
    "regex.backreference": (
        N_("la referencia atrás «\\{digits}» no está soportada: no describe un lenguaje regular"),
        N_("escribe otra vez, explícitamente, el texto del grupo")),
    "regex.unicode_property": (
        N_("la propiedad Unicode «\\{char}{{...}}» no está soportada"),
        N_("escribe la clase con rangos, por ejemplo «[a-zñáéíóú]»")),
    "regex.bad_escape": (
        N_("el escape «\\{char}» no existe"),
        N_("escribe «{char}» sin la barra invertida")),
    "regex.unknown_name": (
        N_("ningún carácter de Unicode se llama {name}"),
        N_("revisa el nombre (en inglés, como «LATIN SMALL LETTER N WITH TILDE»)")),
    "gbnf.expected_name": (
        N_("aquí se espera el nombre de una regla y hay {found}"),
        N_("empieza cada regla con «nombre ::= ...»")),
    "gbnf.expected_define": (
        N_("falta «::=» después del nombre de regla {name}"),
        N_("escribe «nombre ::= ...»")),
    "gbnf.defined_twice": (
        N_("la regla {name} está definida dos veces"),
        N_("junta las dos definiciones en una, con «|» entre las alternativas")),
    "gbnf.token_reference": (
        N_("las referencias a tokens y la negación («{char}...») no están soportadas"),
        N_("escribe el texto como una cadena entre comillas")),
    "gbnf.unexpected_char": (
        N_("aquí no puede ir el carácter {found}"),
        N_("aquí se espera una cadena \"...\", una clase [...], un nombre de regla, «.» o «(»")),
    "gbnf.repeat_too_large": (
        N_("un límite de repetición por encima de {most} no está soportado"),
        N_("usa «*» o «+» en su lugar")),
    "gbnf.unknown_escape": (
        N_("el escape «\\{char}» no existe en GBNF"),
        N_("usa \\n, \\t, \\r, \\\", \\\\, \\xHH o \\uHHHH")),
    "gbnf.undefined_rule": (
        N_("la regla {name} se usa aquí pero no está definida en ninguna parte"),
        N_("añade una línea que la defina, «nombre ::= ...», o corrige el nombre")),
    "gbnf.recursive_no_dfa": (
        N_("la regla {name} es recursiva: la gramática no tiene autómata finito"),
        N_("compílala con engine='auto' o engine='earley'")),
    "syntax.matches_nothing": (
        N_("{syntax} no acepta ningún texto"),
        N_("revisa las clases de caracteres vacías y las reglas que nunca terminan")),
    "limit.choice_states": (
        N_("la lista de opciones necesita {states} estados de autómata, más de los permitidos"),
        N_("acorta la lista de opciones")),
    "limit.nesting": (
        N_("{syntax} anida demasiados niveles de grupos"),
        N_("aplana los grupos anidados: usa repeticiones en vez de anidar")),
    "limit.earley_items": (
        N_("un paso del analizador (Earley) necesitó más de {most} elementos"),
        N_("haz la gramática menos ambigua: evita, por ejemplo, x* x* o repeticiones opcionales anidadas")),
    "schema.unique_items_orders": (
        N_("«uniqueItems» sobre {values} valores no está soportado: habría que escribir {orders} órdenes "
           "distintos de ellos (el límite es {most})"),
        N_("deja menos valores en el «enum» de «items», o pon un «maxItems» menor")),
    "schema.unsupported": (
        N_("la palabra clave «{keyword}» de JSON Schema no está soportada"),
        N_("quita «{keyword}» del esquema{instead}")),
    "schema.unsupported_format": (
        N_("el formato «{value}» no está soportado (se admiten: {supported})"),
        N_("quita «format», o usa uno de esos formatos")),
    "schema.allof_too_large": (
        N_("«{keyword}» en las dos partes de un allOf da demasiadas combinaciones (más de {most})"),
        N_("reduce las alternativas, o saca una de las dos listas del allOf")),
    "schema.allof_conflict": (
        N_("«{keyword}» con dos valores distintos en un allOf no está soportado"),
        N_("deja un solo valor de «{keyword}»")),
    "schema.pattern_construct": (
        N_("«pattern» usa {construct}: esa construcción no está soportada"),
        N_("reescribe el patrón sin esa construcción")),
    "schema.multiple_of": (
        N_("«multipleOf» {value} necesita un autómata de más de {most} estados (llegó a {reached}), y eso no "
           "está soportado"),
        N_("usa un «multipleOf» con menos cifras")),
    "schema.fractional_bounds": (
        N_("«{low_keyword}» ({low}) y «{high_keyword}» ({high}) caen entre los mismos dos enteros seguidos: "
           "esos límites con decimales no están soportados"),
        N_("ensancha el intervalo hasta que contenga un entero, o quita uno de los límites")),
    "schema.bool_container": (
        N_("«{keyword}» sobre objetos no está soportado aquí: los objetos que ha de dejar fuera no se pueden "
           "escribir en positivo (un «enum» de objetos, «patternProperties», «propertyNames», o "
           "«additionalProperties» en un objeto que admite cualquier clave); un objeto se escribe de muchas "
           "formas (orden de las claves), así que nunca se resta como texto"),
        N_("expresa la condición sin excluir objetos: por ejemplo, con «required» y «properties», o con un "
           "«const» distinto en cada alternativa")),
    "schema.object_difference": (
        N_("«{keyword}» sobre objetos no está soportado aquí: escrito como las formas en que un objeto lo "
           "incumple, necesita «{needs}», que ahí se rechaza"),
        N_("simplifica la parte que excluye «{keyword}»")),
    "schema.bool_recursive": (
        N_("«{keyword}» a través de un «$ref» recursivo no está soportado: solo se combinan con autómatas "
           "partes regulares (sin recursión)"),
        N_("quita la recursión de la parte que combina «{keyword}»")),
    "schema.bool_states": (
        N_("«{keyword}» necesita un autómata de más de {most} estados (llegó a {reached}), y eso no está "
           "soportado"),
        N_("simplifica la condición: patrones más cortos o menos repeticiones")),
    "schema.intersection_states": (
        N_("«{keyword}» junto con «{others}» necesita un autómata de más de {most} estados (llegó a {reached}), "
           "y eso no está soportado"),
        N_("reduce «maxLength» o simplifica el patrón")),
    "schema.ref_external": (
        N_("«$ref» a {ref} no está soportado: solo se admiten punteros dentro del mismo esquema, como "
           "«#/$defs/nombre»"),
        N_("copia la definición en «$defs» y apunta a ella")),
    "schema.ref_variants": (
        N_("«$ref» a {ref} aparece dentro de sí mismo con {variants} conjuntos distintos de palabras clave a su "
           "lado (cambian en cada nivel de la recursión), y eso no está soportado"),
        N_("quita las palabras clave que acompañan al $ref recursivo")),
    "schema.dependent_many": (
        N_("«dependentRequired» necesita más de {most} combinaciones de propiedades presentes y ausentes (cada "
           "propiedad que pide otras por su cuenta las duplica), y no está soportado"),
        N_("deja menos dependencias independientes (una cadena, «a» pide «b» y «b» pide «c», cuesta poco)")),
    "schema.pattern_property_escape": (
        N_("«{keyword}» con un escape de propiedad Unicode (\\p{{...}}) no está soportado"),
        N_("escribe la clase de caracteres a mano, por ejemplo [A-Za-zÁÉÍÓÚÜÑáéíóúüñ]")),
    "schema.bad_pattern": (
        N_("{what} no es una expresión regular válida: {detail}"),
        N_("corrige la expresión regular dentro de la cadena")),
    "schema.bad_value": (
        N_("«{keyword}» tiene que ser {expected}{found}"),
        N_("corrige el valor de «{keyword}»")),
    "schema.unknown_type": (
        N_("el tipo {type} no existe en JSON Schema"),
        N_("usa uno de estos: object, array, string, integer, number, boolean, null")),
    "schema.not_json": (
        N_("el esquema no es JSON válido: {detail}"),
        N_("revisa comillas, comas y llaves")),
    "schema.ref_cycle": (
        N_("ningún valor JSON cumple este esquema: el «$ref» a «{ref}» es un ciclo sin caso base (cada "
           "alternativa vuelve a pedirse a sí misma, y ningún valor finito lo termina)"),
        N_("dale una salida: una alternativa sin $ref, o haz opcional la propiedad recursiva")),
    "schema.ref_false": (
        N_("ningún valor JSON cumple este esquema: el «$ref» a «{ref}» lleva a un esquema que ningún valor "
           "cumple"),
        N_("cambia el esquema al que apunta («false» no admite ningún valor) o haz opcional la propiedad que lo "
           "usa")),
    "schema.ref_unresolved": (
        N_("el «$ref» {ref} no lleva a ninguna parte de este esquema"),
        N_("revisa el puntero: tiene que nombrar algo que exista, como «#/$defs/nombre»")),
    "schema.not_a_schema": (
        N_("un esquema tiene que ser un objeto o un booleano (true, false), no «{found}»"),
        N_("escribe aquí un objeto {{...}}, true o false")),
    "regex.group_feature": (
        N_("{feature}"),
        N_("reescribe la expresión sin esa construcción (se admiten (...), (?:...), (?P<nombre>...) y (?#...))")),
    "budget.too_small": (
        N_("el presupuesto de {budget} no basta: {need}"),
        N_("sube «tokens como máximo», o acorta lo que la restricción exige")),
    "token.not_allowed": (
        N_("el token {token_id} no está permitido después de lo escrito"),
        N_("elige uno de los tokens que la máscara permite")),
}

# regex_parse.GROUP_FEATURES' ids: the whole message
_FEATURES = {
    "lookahead": N_("la búsqueda hacia delante «(?=...)» no está soportada"),
    "negative_lookahead": N_("la búsqueda negativa hacia delante «(?!...)» no está soportada"),
    "lookbehind": N_("la búsqueda hacia atrás «(?<=...)» no está soportada"),
    "negative_lookbehind": N_("la búsqueda negativa hacia atrás «(?<!...)» no está soportada"),
    "named_backreference": N_("la referencia atrás a un grupo con nombre «(?P=nombre)» no está soportada"),
    "atomic_group": N_("el grupo atómico «(?>...)» no está soportado"),
    "conditional_group": N_("el grupo condicional «(?(...)...)» no está soportado"),
    "inline_flags": N_("las opciones en línea «(?...)» no están soportadas"),
}
# masker.errors.NESTED's and check_nonempty's ids: what was compiled
_SYNTAX = {"regex": N_("la expresión regular"), "grammar": N_("la gramática"),
           "schema_regex": N_("la expresión regular del esquema")}
# masker.json_schema.errors.EXPECTED's ids: what a keyword's value must be
_EXPECTED = {
    "count": N_("un entero de 0 o más"), "number": N_("un número"), "positive_number": N_("un número mayor que 0"),
    "object": N_("un objeto"), "string_lists": N_("un objeto cuyos valores son listas de cadenas"),
    "property_names": N_("una lista de nombres de propiedades, como [\"a\", \"b\"]"),
    "schemas": N_("una lista no vacía de esquemas"), "boolean": N_("true o false"), "string": N_("una cadena"),
    "list": N_("una lista"), "non_empty_list": N_("una lista no vacía"),
}
# sre_parse's opcodes and categories that a pattern may use and the masker refuses
_SRE_OPS = {
    "ASSERT": N_("una búsqueda «(?=...)» o «(?<=...)»"),
    "ASSERT_NOT": N_("una búsqueda negativa «(?!...)» o «(?<!...)»"),
    "GROUPREF": N_("una referencia atrás «\\1»"), "GROUPREF_EXISTS": N_("un grupo condicional «(?(1)...)»"),
    "ATOMIC_GROUP": N_("un grupo atómico «(?>...)»"), "POSSESSIVE_REPEAT": N_("un cuantificador posesivo"),
    "GROUPREF_IGNORE": N_("una referencia atrás"), "CATEGORY_LINEBREAK": N_("una clase de saltos de línea"),
}


def quoted(text) -> str:
    """«text» in Spanish, “text” in English (the Lab's other messages quote with it too)."""
    return f"“{text}”" if get_language() == "en" else f"«{text}»"


def _quoted_or_nothing(text: str) -> str:
    """A name or a character quoted, or the word for nothing when it is empty (the end of the text)."""
    return quoted(text) if text else _("nada")


def _hex_found(digits: str) -> str:
    return quoted(digits) if digits else _("ninguna")


def _json_shown(text: str) -> str:
    """A value as JSON text, quoted; a JSON string without its own quotes (a type's name)."""
    return quoted(text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text)


def _found(text: str | None) -> str:
    return "" if text is None else _(", y vale {value}").format(value=quoted(text))


def _tokens(n: int) -> str:
    return count(ngettext("{n} token", "{n} tokens", n), n)


def _need(fields: dict) -> str:
    if fields["needed"] is None:
        return _("ningún texto que complete la restricción cabe en él")
    return _("el texto más corto que completa la restricción necesita {tokens}").format(tokens=_tokens(fields["needed"]))


def _pattern_what(keyword: str) -> str:
    return _("el valor de «pattern»") if keyword == "pattern" else _("la clave de «patternProperties»")


def _phrase(table: dict):
    return lambda value: _(table[value]) if value in table else str(value)


def _construct(op: str) -> str:
    return _(_SRE_OPS[op]) if op in _SRE_OPS else _("la construcción {name}").format(name=op)


# field name -> how to write it, for every code that has it; (code, name) for one code only
_NUMBER = fmt_number
FIELDS = {
    "most": _NUMBER, "reached": _NUMBER, "states": _NUMBER, "orders": _NUMBER, "variants": _NUMBER,
    "values": _NUMBER, "low": _NUMBER, "high": _NUMBER, "value": _NUMBER, "token_id": str,
    "syntax": _phrase(_SYNTAX), "feature": _phrase(_FEATURES), "expected": _phrase(_EXPECTED),
    "construct": _construct, "others": lambda names: names.replace(", ", "», «" if get_language() == "es"
                                                                           else "”, “"),
    "budget": _tokens, "found": _quoted_or_nothing, "name": _quoted_or_nothing,
    ("schema.unsupported_format", "value"): str,
    ("regex.bad_hex_escape", "found"): _hex_found, ("gbnf.bad_hex_escape", "found"): _hex_found,
    ("schema.bad_value", "found"): _found, ("schema.not_a_schema", "found"): str,
    ("schema.unknown_type", "type"): _json_shown,
    ("schema.ref_external", "ref"): _quoted_or_nothing, ("schema.ref_variants", "ref"): _quoted_or_nothing,
    ("schema.ref_unresolved", "ref"): _quoted_or_nothing,
    ("schema.not_json", "detail"): json_message, ("schema.bad_pattern", "detail"): re_message,
}


def _instead(fields: dict) -> str:
    """What to write instead of a refused keyword, where there is a supported one."""
    keyword = fields["keyword"]
    if keyword == "unevaluatedProperties":
        return _(", o usa «additionalProperties» en su lugar (basta cuando el esquema no combina subesquemas "
                 "con allOf, anyOf o oneOf)")
    if keyword == "unevaluatedItems":
        return _(", o usa «items» en su lugar (basta cuando el esquema no combina subesquemas con allOf, "
                 "anyOf o oneOf)")
    return _(", o exprésalo sin ella (por ejemplo con anyOf o enum)")


def _bracket(fields: dict) -> str:
    return _("; un «]» justo después de «[» es un carácter de la clase, no la cierra") \
        if fields.get("literal_bracket") else ""


# fields a template needs that the error does not hold: made from all its fields
DERIVED = {"budget.too_small": {"need": _need},
           "schema.bad_pattern": {"what": lambda fields: _pattern_what(fields["keyword"])},
           "schema.unsupported": {"instead": _instead}, "regex.unclosed_class": {"bracket": _bracket}}

# the kind of problem, where the masker's class says it badly; else KIND_WORDS by the class's kind
HEADINGS = {"gbnf.never_finishes": N_("gramática imposible"), "syntax.matches_nothing": N_("restricción imposible"),
            "gbnf.undefined_rule": N_("error en la gramática"), "gbnf.defined_twice": N_("error en la gramática"),
            "gbnf.no_root": N_("error en la gramática"), "gbnf.recursive_no_dfa": N_("no soportado"),
            "schema.unsatisfiable": N_("esquema imposible"), "schema.ref_cycle": N_("esquema imposible"),
            "schema.ref_false": N_("esquema imposible"), "choice.empty": N_("error")}
# an unsupported feature's message says «no está soportado» itself: its heading is neutral
KIND_WORDS = {"syntax error": N_("error de sintaxis"), "unsupported feature": N_("error"),
              "invalid schema": N_("esquema no válido"), "limit": N_("demasiado grande")}
# LimitExceeded.limit (the masker's keyword argument) -> its value with what it counts
_STATES = lambda n: ngettext("{n} estado", "{n} estados", n)  # noqa: E731
LIMIT_UNITS = {"max_states": _STATES, "max_nfa_states": _STATES, "max_budget_states": _STATES,
               "max_items": lambda n: ngettext("{n} elemento", "{n} elementos", n),
               "max_trie_steps": lambda n: ngettext("{n} paso", "{n} pasos", n),
               "max_productions": lambda n: ngettext("{n} producción", "{n} producciones", n),
               "max_regex_chars": lambda n: ngettext("{n} carácter", "{n} caracteres", n),
               "nesting depth": lambda n: ngettext("{n} nivel", "{n} niveles", n)}


def heading(exc: MaskerError) -> str:
    """The kind of problem, in the current language: «demasiado grande» for a limit, else by code
    (:data:`HEADINGS`) or by the error's class (:data:`KIND_WORDS`)."""
    if isinstance(exc, LimitExceeded):
        return _(KIND_WORDS["limit"])
    if exc.code in HEADINGS:
        return _(HEADINGS[exc.code])
    return _(KIND_WORDS.get(getattr(exc, "kind", ""), "error"))


def _written(code: str, fields: dict) -> dict[str, str]:
    out = {}
    for name, value in fields.items():
        how = FIELDS.get((code, name)) or FIELDS.get(name)
        out[name] = how(value) if how is not None and value is not None else ("" if value is None else str(value))
    for name, make in DERIVED.get(code, {}).items():
        out[name] = make(fields)
    return out


def render(exc: MaskerError) -> tuple[str, str, str]:
    """(code, message, fix) of any masker error, in the current language.

    The message and fix come from :data:`MESSAGES` by ``exc.code``, filled with ``exc.fields``
    as :data:`FIELDS` and :data:`DERIVED` write them; a run-time limit adds its value and unit
    («(límite: 20 000 estados)»). A code the catalog lacks (an error raised by code outside the
    masker's known sites) keeps the masker's English words, labelled (:func:`unknown`)."""
    if exc.code not in MESSAGES:
        return unknown(exc)
    message, fix = (_(text) for text in MESSAGES[exc.code])
    values = _written(exc.code, dict(exc.fields))
    message, fix = message.format(**values), fix.format(**values)
    if isinstance(exc, LimitExceeded) and exc.limit in LIMIT_UNITS:
        value = exc.value if isinstance(exc.value, int) else 0
        unit = LIMIT_UNITS[exc.limit](value).format(n=fmt_int(value))
        message = _("{message} (límite: {unit})").format(message=message, unit=unit)
    return exc.code, message, fix


DETAIL = N_("detalle del compilador de la máscara, en inglés")


def unknown(exc: MaskerError) -> tuple[str, str, str]:
    """(code "masker.other", message, "") for an error whose code the catalog does not know: the
    masker's English words only as a labelled detail."""
    reason = getattr(exc, "reason", None) or getattr(exc, "what", None) or str(exc).split("\n")[0]
    keyword = getattr(exc, "keyword", None)
    what = (_("la palabra clave «{keyword}» no se puede usar así").format(keyword=keyword) if keyword
            else _("el compilador de la máscara no acepta esta restricción"))
    return "masker.other", f"{what} ({_(DETAIL)}: {reason})", ""
