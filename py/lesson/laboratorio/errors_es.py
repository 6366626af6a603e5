"""The masker's errors in Spanish, placed in the text the reader typed.

The masker (``masker.errors``) writes its messages in English, for programmers. The «Laboratorio»
shows them through :data:`CATALOG`, keyed by error kind ("regex.unclosed_group", "schema.unsupported",
...): for each, the English reason it recognises (a regular expression that must match the whole
reason: ``GrammarSyntaxError.reason``, ``LimitExceeded.what``) and the Spanish message and fix
(``str.format`` templates over the match's groups, some of them first put in Spanish by
:data:`GROUPS`), so another edition of the page can reuse the keys with its own texts.
:data:`HEADINGS` names the kind of problem for the keys whose masker class says it badly (a
grammar that matches no text is not a syntax error). The catalog covers every reason the masker
raises at compile time (regex, choice, GBNF, JSON Schema; the test
``tests/lesson/laboratorio/test_laboratorio_errors.py`` reads the masker's source for its raise
sites) and its run-time work limits; a reason it does not know would get a Spanish message with
the English words only as a labelled detail («detalle del compilador de la máscara, en inglés: ...»,
kind "masker.other").

Numbers in the messages are written the Spanish way (:func:`es_number`: 5,5, −1, 10³⁰, 20 000);
a position in the reader's text counts from 1, as the caller's ``_where`` says it.

Python's own messages are put in Spanish too: ``re``'s, quoted by the masker for a schema's
invalid ``pattern`` (:func:`re_message`), and ``json``'s, for a schema that is not JSON
(:func:`json_message`).

A JSON Schema error names a place as a JSON pointer (``#/properties/edad/if``);
:func:`pointer_span` finds that keyword in the schema's text, so the caret and the editor's
underline fall on it, with its line and column; :func:`string_offset` goes on inside a JSON string
(the character of an invalid ``pattern`` that ``re`` points at).
"""

from __future__ import annotations

import re

from ..numbers import en_number, es_int, es_number  # es_number: the Lab's callers import it from here

_KW = r"JSON Schema keyword "
_REPR = r"(?:'[^']*'|\"[^\"]*\")"

# kind: (English reason, Spanish message, Spanish fix); the templates see the match's groups {0}, {1}...
CATALOG: dict[str, tuple[str, str, str]] = {
    # --- regular expressions (masker.regex_parse), and the same words in GBNF (masker.gbnf_parse)
    "regex.unclosed_group": (r"missing '\)': the group opened here is not closed",
                             "falta «)»: el grupo que se abre aquí no se cierra",
                             "añade «)», o escribe «\\(» si querías un paréntesis literal"),
    "regex.unbalanced_paren": (r"unbalanced '\)': no group is open here",
                               "sobra este «)»: no hay ningún grupo abierto que cerrar",
                               "quítalo, o escribe «\\)» si querías un paréntesis literal"),
    "syntax.nothing_to_repeat": (r"nothing to repeat before '(.)'",
                                 "no hay nada que repetir antes de «{0}»: un cuantificador va detrás de algo",
                                 "pon «{0}» detrás de un carácter, una clase o un grupo (en una expresión "
                                 "regular, «\\{0}» es el carácter «{0}» literal)"),
    "regex.anchor_inside": (r"anchor '(.)' in the middle of the pattern",
                            "el ancla «{0}» en medio de la expresión no está soportada: la expresión "
                            "siempre tiene que coincidir con el texto entero",
                            "quítala: «^» solo vale al principio y «$» al final, y no hacen falta"),
    "regex.bad_group_name": (r"bad group name: expected \(\?P<name>\.\.\.\)",
                             "nombre de grupo mal escrito: se espera «(?P<nombre>...)»",
                             "cierra el nombre con «>»"),
    "regex.unclosed_comment": (r"missing '\)' after comment group \(\?#",
                               "falta «)»: el comentario «(?#...» que se abre aquí no se cierra",
                               "cierra el comentario con «)»"),
    "syntax.bad_repeat": (r"bad repeat interval \{(\d+),(\d+)\}: min is greater than max",
                          "la repetición {{{0},{1}}} es imposible: el mínimo es mayor que el máximo",
                          "escribe {{{1},{0}}}"),
    "regex.multiple_repeat": (r"multiple repeat: a quantifier follows another quantifier",
                              "dos cuantificadores seguidos: aquí un cuantificador sigue a otro",
                              "agrupa el primero: «(?:x*)+»"),
    "regex.possessive": (r"possessive quantifier",
                         "el cuantificador posesivo («*+», «++», «?+», «{{m,n}}+») no está soportado",
                         "quita el «+» que sigue al cuantificador"),
    "syntax.unclosed_class": (r"missing '\]': the class opened here is not closed",
                              "falta «]»: la clase de caracteres que se abre aquí («[») no se cierra",
                              "añade «]» al final de la clase"),
    "regex.range_ends_in_class": (r"bad character range: a class like \\d cannot end a range",
                                  "rango de caracteres mal formado: una clase como «\\d» no puede cerrar "
                                  "un rango",
                                  "pon «-» al principio o al final de la clase si querías un guion literal"),
    "syntax.bad_range": (r"bad (?:character )?range (.)-(.): start is after end",
                         "el rango «{0}-{1}» está al revés: «{0}» va después de «{1}»",
                         "escribe «{1}-{0}»"),
    "regex.trailing_backslash": (r"trailing backslash at the end of the pattern",
                                 "la expresión acaba en una barra invertida «\\» sola",
                                 "escribe «\\\\» para una barra invertida literal"),
    "regex.boundary": (r"\\(.) \(word boundary or anchor\) is not a character",
                       "«\\{0}» (un límite de palabra o un ancla) no está soportado: no es un carácter",
                       "quítalo: la expresión siempre coincide con el texto entero"),
    "regex.backreference": (r"backreference \\(\d+)",
                            "la referencia atrás «\\{0}» no está soportada: no describe un lenguaje regular",
                            "escribe otra vez, explícitamente, el texto del grupo"),
    "regex.unicode_property": (r"Unicode property \\([pP])\{\.\.\.\}",
                               "la propiedad Unicode «\\{0}{{...}}» no está soportada",
                               "escribe la clase con rangos, por ejemplo «[a-zñáéíóú]»"),
    "syntax.bad_hex_escape": (r"bad escape \\([xuU]): expected (\d+) hex digits, found ('.*'|\".*\")",
                              "escape «\\{0}» mal formado: se esperaban {1} cifras hexadecimales y hay {2}",
                              "escribe «\\{0}» seguido de exactamente {1} cifras hexadecimales (0-9, a-f)"),
    "syntax.beyond_unicode": (r"bad escape \\([xuU])([0-9a-fA-F]+): beyond U\+10FFFF",
                              "el escape «\\{0}{1}» pasa del último carácter de Unicode, U+10FFFF",
                              "usa el código de un carácter que exista"),
    "regex.bad_named_escape": (r"bad escape \\N: expected \\N\{NAME\}",
                               "escape «\\N» mal formado: se espera «\\N{{NOMBRE}}»",
                               "escribe, por ejemplo, «\\N{{LATIN SMALL LETTER N WITH TILDE}}»"),
    "regex.unknown_name": (r"unknown Unicode character name ('.*'|\".*\")",
                           "ningún carácter de Unicode se llama {0}",
                           "revisa el nombre (en inglés, como «LATIN SMALL LETTER N WITH TILDE»)"),
    "regex.bad_escape": (r"bad escape \\(.)",
                         "el escape «\\{0}» no existe",
                         "escribe «{0}» sin la barra invertida"),
    # --- GBNF (masker.gbnf_parse, masker.cfg, masker.cfg_lowering)
    "gbnf.expected_name": (r"expected a rule name, found ('.*'|\".*\")",
                           "aquí se espera el nombre de una regla y hay {0}",
                           "empieza cada regla con «nombre ::= ...»"),
    "gbnf.expected_define": (r"expected '::=' after rule name ('.*'|\".*\")",
                             "falta «::=» después del nombre de regla {0}",
                             "escribe «nombre ::= ...»"),
    "gbnf.defined_twice": (r"rule ('.*'|\".*\") is defined twice",
                           "la regla {0} está definida dos veces",
                           "junta las dos definiciones en una, con «|» entre las alternativas"),
    "gbnf.token_reference": (r"token references and negation \((.)\.\.\.\) are not supported",
                             "las referencias a tokens y la negación («{0}...») no están soportadas",
                             "escribe el texto como una cadena entre comillas"),
    "gbnf.unexpected_char": (r"unexpected character ('.*'|\".*\")",
                             "aquí no puede ir el carácter {0}",
                             "aquí se espera una cadena \"...\", una clase [...], un nombre de regla, "
                             "«.» o «(»"),
    "gbnf.multiple_repeat": (r"a quantifier follows another quantifier",
                             "dos cuantificadores seguidos: aquí un cuantificador sigue a otro",
                             "pon el elemento entre paréntesis: «(x*)+»"),
    "gbnf.bad_repetition": (r"bad repetition: expected \{m\}, \{m,\} or \{m,n\}",
                            "repetición mal escrita: se espera {{m}}, {{m,}} o {{m,n}}",
                            "escribe, por ejemplo, {{2,5}}"),
    "gbnf.bad_repeat": (r"bad repetition \{(\d+),(\d+)\}: min is greater than max",
                        "la repetición {{{0},{1}}} es imposible: el mínimo es mayor que el máximo",
                        "escribe {{{1},{0}}}"),
    "gbnf.repeat_too_large": (r"repetition bound above (\d+)",
                              "un límite de repetición por encima de {0} no está soportado",
                              "usa «*» o «+» en su lugar"),
    "gbnf.unclosed_string": (r"missing '\"': the string opened here is not closed",
                             "falta «\"»: la cadena que se abre aquí no se cierra",
                             "añade «\"» al final de la cadena"),
    "gbnf.unknown_escape": (r"unknown escape \\(.?)",
                            "el escape «\\{0}» no existe en GBNF",
                            "usa \\n, \\t, \\r, \\\", \\\\, \\xHH o \\uHHHH"),
    "gbnf.no_root": (r"no rule named 'root' \(the start rule\)",
                     "no hay ninguna regla «root», la regla por la que empieza la gramática",
                     "añade una línea «root ::= ...»"),
    "gbnf.undefined_rule": (r"rule ('.*'|\".*\") is used but never defined",
                            "la regla {0} se usa aquí pero no está definida en ninguna parte",
                            "añade una línea que la defina, «nombre ::= ...», o corrige el nombre"),
    "gbnf.recursive_no_dfa": (r"rule ('.*'|\".*\") is recursive, so the grammar has no DFA",
                              "la regla {0} es recursiva: la gramática no tiene autómata finito",
                              "compílala con engine='auto' o engine='earley'"),
    "gbnf.never_finishes": (r"the grammar matches no text at all \(root never finishes\)",
                            "ningún texto la cumple: «root» nunca termina, porque cada una de sus "
                            "alternativas vuelve a pedir una regla que no acaba",
                            "da a cada regla recursiva un caso base, por ejemplo root ::= \"a\" root | \"a\""),
    "syntax.matches_nothing": (r"the (regular expression|grammar) matches no text at all \(expected at least "
                               r"one complete text, found none\)",
                               "{0} no acepta ningún texto",
                               "revisa las clases de caracteres vacías y las reglas que nunca terminan"),
    # --- a list of options (masker.regex_fsm)
    "choice.empty": (r"compile_choice got no texts \(expected at least one\)",
                     "la lista de opciones está vacía", "escribe una opción por línea"),
    # --- size and work limits (LimitExceeded.what)
    "limit.choice_states": (r"the choice needs (\d+) DFA states",
                            "la lista de opciones necesita {0} estados de autómata, más de los permitidos",
                            "acorta la lista de opciones"),
    "limit.nfa_states": (r"the regular expression expands to too many NFA states",
                         "la expresión regular se expande en demasiados estados de autómata",
                         "baja los límites de las repeticiones {{m,n}}, o divide la expresión"),
    "limit.dfa_states": (r"the automaton needs too many DFA states",
                         "el autómata necesita demasiados estados",
                         "simplifica la restricción: las repeticiones acotadas de alternativas "
                         "multiplican los estados"),
    "limit.nesting": (r"the (regular expression|grammar|schema's regular expression) nests too deeply",
                      "{0} anida demasiados niveles de grupos",
                      "aplana los grupos anidados: usa repeticiones en vez de anidar"),
    "limit.productions": (r"the grammar lowers to too many productions",
                          "la gramática se traduce en demasiadas producciones",
                          "baja los límites de las repeticiones {{m,n}}, o simplifica las reglas"),
    "limit.schema_nesting": (r"the schema nests too deeply for the translator",
                             "el esquema anida demasiados niveles",
                             "aplánalo: menos allOf, anyOf o $ref unos dentro de otros"),
    "limit.schema_regex": (r"the regex for this schema grows too long",
                           "la expresión regular de este esquema crece demasiado",
                           "simplifica el esquema"),
    "limit.earley_items": (r"one Earley step needed more than (\d+) items",
                           "un paso del analizador (Earley) necesitó más de {0} elementos",
                           "haz la gramática menos ambigua: evita, por ejemplo, x* x* o repeticiones "
                           "opcionales anidadas"),
    "limit.mask_steps": (r"computing one mask needed too many automaton steps",
                         "calcular una máscara necesitó demasiados pasos del autómata",
                         "usa una gramática más pequeña"),
    "limit.budget_steps": (r"finding the token steps of one state needed too many automaton steps",
                           "recorrer los tokens de un estado necesitó demasiados pasos del autómata",
                           "usa una gramática más pequeña"),
    "limit.budget_states": (r"a budget-aware mask had to visit too many states",
                            "la máscara que cuenta el presupuesto tuvo que visitar demasiados estados",
                            "usa un presupuesto menor o una gramática más estrecha"),
    # --- JSON Schema (masker.json_schema): UnsupportedKeyword ("JSON Schema keyword 'k' ...")
    "schema.unique_items_with": (_KW + r"'uniqueItems' together with prefixItems or contains is not supported",
                                 "«uniqueItems» junto a «prefixItems» o «contains» no está soportado",
                                 "quita «uniqueItems», o «prefixItems» y «contains»"),
    "schema.unique_items_set": (_KW + r"'uniqueItems' is supported only for items from a finite set of values "
                                r"\(enum, const, boolean, null\)",
                                "«uniqueItems» solo está soportado cuando los elementos salen de un conjunto "
                                "finito de valores («enum», «const», booleanos o null)",
                                "da a «items» un «enum» con los valores posibles, o quita «uniqueItems»"),
    "schema.unique_items_orders": (_KW + r"'uniqueItems' over (\d+) item values is not supported: it needs (\d+) "
                                   r"orders of them \(limit (\d+)\)",
                                   "«uniqueItems» sobre {0} valores no está soportado: habría que escribir {1} "
                                   "órdenes distintos de ellos (el límite es {2})",
                                   "deja menos valores en el «enum» de «items», o pon un «maxItems» menor"),
    "schema.unsupported": (_KW + r"'([^']+)' is not supported",
                           "la palabra clave «{0}» de JSON Schema no está soportada",
                           "quita «{0}» del esquema, o exprésalo sin ella (por ejemplo con anyOf o enum)"),
    "schema.unsupported_value": (_KW + r"'([^']+)' value '([^']*)' is not supported \(supported: (.*)\)",
                                 "el valor «{1}» de «{0}» no está soportado (se admiten: {2})",
                                 "usa uno de esos valores, o quita «{0}» del esquema"),
    "schema.format_regex": (_KW + r"'format' value 'regex' is not supported: the valid regular expressions nest "
                            r"their groups to any depth, which no finite automaton can check",
                            "el formato «regex» no está soportado: las expresiones regulares válidas anidan "
                            "sus grupos a cualquier profundidad, y eso no lo comprueba ningún autómata finito",
                            "quita «format», o describe los textos con un «pattern»"),
    "schema.unsupported_format": (_KW + r"'format' value ('.*'|\".*\") is not supported",
                                  "el formato {0} no está soportado",
                                  "quita «format», o usa uno de los formatos que se admiten"),
    "schema.enum_cycle": (_KW + r"'enum' checked against sub-schemas that refer to each other without end is "
                          r"not supported",
                          "los valores de «enum» no se pueden comprobar: los subesquemas que los acompañan se "
                          "remiten unos a otros sin fin",
                          "quita la referencia circular de los subesquemas junto a «enum»"),
    "schema.allof_too_large": (_KW + r"'(anyOf|oneOf)' in both parts of an allOf is too large",
                               "«{0}» en las dos partes de un allOf da demasiadas combinaciones (más de 64)",
                               "reduce las alternativas, o saca una de las dos listas del allOf"),
    "schema.allof_conflict": (_KW + r"'([^']+)' with two different values in an allOf is not supported",
                              "«{0}» con dos valores distintos en un allOf no está soportado",
                              "deja un solo valor de «{0}»"),
    "schema.pattern_flags": (_KW + r"'pattern' with inline flags is not supported(?: \(pattern .*\))?",
                             "«pattern» usa opciones en línea como «(?i)», que no están soportadas",
                             "quita la opción y escribe las variantes, por ejemplo «[Aa]» en vez de «(?i)a»"),
    "schema.pattern_anchor": (_KW + r"'pattern' with an anchor or \\b inside the pattern is not supported "
                              r"\(pattern .*\)",
                              "«pattern» tiene un ancla («^», «$») o un «\\b» en medio, y eso no está soportado",
                              "deja «^» solo al principio y «$» solo al final, y quita «\\b»"),
    "schema.pattern_construct": (_KW + r"'pattern' with (?:class item|category|the construct) (\S+) is not "
                                 r"supported \(pattern .*\)",
                                 "«pattern» usa {0}: esa construcción no está soportada",
                                 "reescribe el patrón sin esa construcción"),
    "schema.multiple_of": (_KW + r"'multipleOf' (\S+) needs an automaton of more than (\d+) states \(it reached "
                           r"(\d+)\); this is not supported",
                           "«multipleOf» {0} necesita un autómata de más de {1} estados (llegó a {2}), y eso "
                           "no está soportado",
                           "usa un «multipleOf» con menos cifras"),
    "schema.fractional_bounds": (_KW + r"'minimum' and maximum with fractional values inside one unit "
                                 r"interval \((.*), (.*)\) are not supported",
                                 "«minimum» y «maximum» con decimales entre dos enteros seguidos ({0} y {1}) "
                                 "no están soportados",
                                 "ensancha el intervalo hasta que contenga un entero, o quita uno de los límites"),
    "schema.format_with_length": (_KW + r"'format' together with minLength, maxLength or pattern is not "
                                  r"supported",
                                  "«format» junto a «minLength», «maxLength» o «pattern» no está soportado",
                                  "quita «format», o las otras condiciones de la cadena"),
    "schema.pattern_with_length": (_KW + r"'pattern' together with minLength/maxLength is supported only "
                                   r"for patterns like \^\[a-z\]\{m,n\}\$",
                                   "«pattern» junto a «minLength» o «maxLength» solo está soportado para "
                                   "patrones como ^[a-z]{{m,n}}$",
                                   "pon la longitud dentro del patrón, con {{m,n}}, y quita «minLength» y "
                                   "«maxLength»"),
    "schema.max_contains": (_KW + r"'maxContains' is not supported \(it needs the items that do not match "
                            r"contains\)",
                            "«maxContains» no está soportado: necesitaría los elementos que no cumplen "
                            "«contains»",
                            "quita «maxContains»"),
    "schema.contains_prefix": (_KW + r"'contains' together with prefixItems is not supported",
                               "«contains» junto con «prefixItems» no está soportado",
                               "quita uno de los dos"),
    "schema.contains_counts": (_KW + r"'contains' together with maxItems, or minItems above minContains, is not "
                               r"supported",
                               "«contains» junto con «maxItems», o con un «minItems» mayor que «minContains», "
                               "no está soportado",
                               "quita «maxItems», o sube «minContains» hasta «minItems»"),
    "schema.bool_container": (_KW + r"'(\w+)' over objects is not supported where the objects it must leave "
                              r"out have no positive form .*",
                              "«{0}» sobre objetos no está soportado aquí: los objetos que ha de dejar fuera "
                              "no se pueden escribir en positivo (un «enum» de objetos, «patternProperties», "
                              "«propertyNames», o «additionalProperties» en un objeto que admite cualquier "
                              "clave); un objeto se escribe de muchas formas (orden de las claves), así que "
                              "nunca se resta como texto",
                              "expresa la condición sin excluir objetos: por ejemplo, con «required» y "
                              "«properties», o con un «const» distinto en cada alternativa"),
    "schema.object_difference": (_KW + r"'(\w+)' over objects is not supported here: written as the ways an "
                                 r"object breaks it, it needs '(\w+)', which is refused there",
                                 "«{0}» sobre objetos no está soportado aquí: escrito como las formas en que un "
                                 "objeto lo incumple, necesita «{1}», que ahí se rechaza",
                                 "simplifica la parte que excluye «{0}»"),
    "schema.min_properties_extra": (_KW + r"'minProperties' that extra keys would have to reach \(two or more "
                                    r"besides the listed properties\) is not supported: .*",
                                    "«minProperties» no está soportado cuando hacen falta dos o más claves "
                                    "fuera de «properties» para llegar a él: una gramática no puede impedir "
                                    "que se repita la misma clave",
                                    "declara en «properties» las claves que cuentas"),
    "schema.bool_recursive": (_KW + r"'(\w+)' over \w+s through a recursive \$ref is not supported: .*",
                              "«{0}» a través de un «$ref» recursivo no está soportado: solo se combinan con "
                              "autómatas partes regulares (sin recursión)",
                              "quita la recursión de la parte que combina «{0}»"),
    "schema.bool_states": (_KW + r"'(\w+)' over \w+s needs an automaton of more than (\d+) states \(it reached "
                           r"(\d+)\); this is not supported",
                           "«{0}» necesita un autómata de más de {1} estados (llegó a {2}), y eso no está "
                           "soportado",
                           "simplifica la condición: patrones más cortos o menos repeticiones"),
    "schema.intersection_states": (_KW + r"'(\w+)' together with (\w+(?:, \w+)*) needs an automaton of more "
                                   r"than (\d+) states \(it reached (\d+)\); this is not supported",
                                   "«{0}» junto con «{1}» necesita un autómata de más de {2} estados (llegó a "
                                   "{3}), y eso no está soportado",
                                   "reduce «maxLength» o simplifica el patrón"),
    "schema.ref_external": (_KW + r"'\$ref' to ('.*'|\".*\") is not supported \(only local JSON pointers such "
                            r"as '#/\$defs/name'\)",
                            "«$ref» a {0} no está soportado: solo se admiten punteros dentro del mismo "
                            "esquema, como «#/$defs/nombre»",
                            "copia la definición en «$defs» y apunta a ella"),
    "schema.ref_variants": (_KW + r"'\$ref' to ('.*'|\".*\") is met inside itself with (\d+) different sets of "
                            r"sibling keywords .*",
                            "«$ref» a {0} aparece dentro de sí mismo con {1} conjuntos distintos de "
                            "palabras clave a su lado (cambian en cada nivel de la recursión), y eso no "
                            "está soportado",
                            "quita las palabras clave que acompañan al $ref recursivo"),
    "schema.ref_recursion": (_KW + r"'\$ref' recursion through allOf or sibling keywords is not supported",
                             "la recursión de «$ref» a través de allOf o de palabras clave a su lado no está "
                             "soportada",
                             "deja el $ref recursivo solo, sin otras palabras clave"),
    "schema.dependent_many": (_KW + r"'dependentRequired' needs more than (\d+) combinations of present and absent "
                              r"trigger properties \(independent triggers double them\), which is not supported",
                              "«dependentRequired» necesita más de {0} combinaciones de propiedades presentes y "
                              "ausentes (cada propiedad que pide otras por su cuenta las duplica), y no está "
                              "soportado",
                              "deja menos dependencias independientes (una cadena, «a» pide «b» y «b» pide «c», "
                              "cuesta poco)"),
    "schema.pattern_property_escape": (_KW + r"'(pattern|patternProperties)' with a Unicode property escape "
                                       r"\(\\p\{\.\.\.\}\) is not supported",
                                       "«{0}» con un escape de propiedad Unicode (\\p{{...}}) no está "
                                       "soportado",
                                       "escribe la clase de caracteres a mano, por ejemplo "
                                       "[A-Za-zÁÉÍÓÚÜÑáéíóúüñ]"),
    "schema.bad_pattern": (r"(pattern|patternProperties) " + _REPR + r" is not a valid regex \((.*)\)",
                           "{0} no es una expresión regular válida: {1}",
                           "corrige la expresión regular dentro de la cadena"),
    "schema.bad_value": (r"(\S+) must be (.+?)(, found .*)?",
                         "«{0}» tiene que ser {1}{2}",
                         "corrige el valor de «{0}»"),
    "schema.unknown_type": (r"unknown type ('.*'|\".*\") \(expected one of .*\)",
                            "el tipo {0} no existe en JSON Schema",
                            "usa uno de estos: object, array, string, integer, number, boolean, null"),
    "schema.not_json": (r"not valid JSON: (.*)", "el esquema no es JSON válido: {0}",
                        "revisa comillas, comas y llaves"),
    "schema.ref_cycle": (r"no JSON value satisfies this schema: \$ref (\S+) is a cycle with no base case .*",
                         "ningún valor JSON cumple este esquema: el «$ref» a «{0}» es un ciclo sin caso base "
                         "(cada alternativa vuelve a pedirse a sí misma, y ningún valor finito lo termina)",
                         "dale una salida: una alternativa sin $ref, o haz opcional la propiedad recursiva"),
    "schema.ref_false": (r"no JSON value satisfies this schema: \$ref (\S+) points to a schema that no value "
                         r"satisfies",
                         "ningún valor JSON cumple este esquema: el «$ref» a «{0}» lleva a un esquema que "
                         "ningún valor cumple",
                         "cambia el esquema al que apunta («false» no admite ningún valor) o haz opcional "
                         "la propiedad que lo usa"),
    "schema.unsatisfiable": (r"no JSON value satisfies this schema",
                             "ningún valor JSON cumple este esquema",
                             "corrige las condiciones que se contradicen"),
    "schema.ref_unresolved": (r"\$ref ('.*'|\".*\") does not resolve",
                              "el «$ref» {0} no lleva a ninguna parte de este esquema",
                              "revisa el puntero: tiene que nombrar algo que exista, como «#/$defs/nombre»"),
    "schema.not_a_schema": (r"a schema must be an object or a boolean, not (.*)",
                            "un esquema tiene que ser un objeto o un booleano (true, false), no «{0}»",
                            "escribe aquí un objeto {{...}}, true o false"),
}

_FEATURES = {  # regex_parse._group_feature's names: (Spanish, its gender)
    "lookahead (?=...)": ("la búsqueda hacia delante «(?=...)»", "a"),
    "negative lookahead (?!...)": ("la búsqueda negativa hacia delante «(?!...)»", "a"),
    "lookbehind (?<=...)": ("la búsqueda hacia atrás «(?<=...)»", "a"),
    "negative lookbehind (?<!...)": ("la búsqueda negativa hacia atrás «(?<!...)»", "a"),
    "named backreference (?P=name)": ("la referencia atrás a un grupo con nombre «(?P=nombre)»", "a"),
    "atomic group (?>...)": ("el grupo atómico «(?>...)»", "o"),
    "conditional group (?(...)...)": ("el grupo condicional «(?(...)...)»", "o"),
    "inline flags (?...)": ("las opciones en línea «(?...)»", "as"),
}
for _i, (_english, (_spanish, _g)) in enumerate(_FEATURES.items()):
    _verb = "no están soportadas" if _g == "as" else f"no está soportad{_g}"
    CATALOG[f"regex.group_feature.{_i}"] = (re.escape(_english), f"{_spanish} {_verb}",
                                            "reescribe la expresión sin esa construcción (se admiten "
                                            "(...), (?:...), (?P<nombre>...) y (?#...))")

_VALUE_PHRASES = {  # keywords.VALUE_RULES's phrases
    "a non-negative integer": "un entero de 0 o más", "a number": "un número",
    "a number greater than 0": "un número mayor que 0", "an object": "un objeto",
    "an object whose values are lists of strings": "un objeto cuyos valores son listas de cadenas",
    "a list of property names (draft 3's boolean required is not supported: list the name in the "
    "parent object's required)": "una lista de nombres de propiedades (el \"required\": true del "
                                 "draft 3 no está soportado: pon el nombre en el «required» del objeto de fuera)",
    "a non-empty list of schemas": "una lista no vacía de esquemas", "true or false": "true o false",
    "a string": "una cadena", "a list": "una lista", "a non-empty list": "una lista no vacía",
}
_SRE_OPS = {"ASSERT": "una búsqueda alrededor «(?=...)» o «(?<=...)»",
            "ASSERT_NOT": "una búsqueda negativa «(?!...)» o «(?<!...)»",
            "GROUPREF": "una referencia atrás «\\1»", "GROUPREF_EXISTS": "un grupo condicional «(?(1)...)»",
            "ATOMIC_GROUP": "un grupo atómico «(?>...)»", "POSSESSIVE_REPEAT": "un cuantificador posesivo",
            "GROUPREF_IGNORE": "una referencia atrás", "CATEGORY_LINEBREAK": "una clase de saltos de línea"}
def _as_json(shown: str) -> str:
    """A value as the masker quotes it (Python's repr) written as in the schema's JSON, in «»."""
    if len(shown) >= 2 and shown[0] == shown[-1] and shown[0] in "'\"":
        return f"«\"{shown[1:-1]}\"»"
    return "«" + re.sub(r"\b(True|False|None)\b", lambda m: {"True": "true", "False": "false",
                                                            "None": "null"}[m[1]], shown) + "»"


def _es_shown(text: str) -> str:
    """A number as the masker printed it (Python's repr: "0.25", "1e+30") written by :func:`es_number`."""
    try:
        return es_number(float(text) if any(c in text for c in ".eEn") else int(text))
    except ValueError:
        return text


_WHAT = {"regular expression": "la expresión regular", "grammar": "la gramática",
         "schema's regular expression": "la expresión regular del esquema"}

# key: {group index: function putting that group in Spanish before it reaches the templates}
GROUPS = {
    "schema.bad_pattern": {0: lambda k: "el valor de «pattern»" if k == "pattern" else
                           "la clave de «patternProperties»", 1: lambda m: re_message(m)},
    "schema.bad_value": {1: lambda p: _VALUE_PHRASES.get(p, f"«{p}»"),
                         2: lambda found: f", y vale {_as_json(found[len(', found '):])}" if found else ""},
    "schema.fractional_bounds": {0: lambda v: _es_shown(v), 1: lambda v: _es_shown(v)},
    "schema.bool_states": {1: lambda n: es_int(int(n)), 2: lambda n: es_int(int(n))},
    "schema.multiple_of": {0: lambda v: _es_shown(v), 1: lambda n: es_int(int(n)), 2: lambda n: es_int(int(n))},
    "schema.intersection_states": {1: lambda k: k.replace(", ", "», «"), 2: lambda n: es_int(int(n)),
                                   3: lambda n: es_int(int(n))},
    "gbnf.repeat_too_large": {0: lambda n: es_int(int(n))},
    "schema.unique_items_orders": {1: lambda n: es_int(int(n)), 2: lambda n: es_int(int(n))},
    "schema.dependent_many": {0: lambda n: es_int(int(n))},
    "limit.choice_states": {0: lambda n: es_int(int(n))},
    "limit.earley_items": {0: lambda n: es_int(int(n))},
    "schema.pattern_construct": {0: lambda op: _SRE_OPS.get(op, f"la construcción {op}")},
    "syntax.matches_nothing": {0: lambda w: _WHAT.get(w, w)},
    "limit.nesting": {0: lambda w: _WHAT.get(w, w)},
    "schema.not_json": {0: lambda m: json_message(re.sub(r": line \d+ column \d+ \(char \d+\)$", "", m))},
    "syntax.bad_hex_escape": {2: lambda d: "«" + d[1:-1] + "»" if d[1:-1] else "nada"},
}
for _key, _quoted in (("regex.unknown_name", 0), ("gbnf.expected_name", 0), ("gbnf.expected_define", 0),
                      ("gbnf.defined_twice", 0), ("gbnf.unexpected_char", 0), ("gbnf.undefined_rule", 0),
                      ("gbnf.recursive_no_dfa", 0), ("schema.unsupported_format", 0),
                      ("schema.pattern_properties_required", 0), ("schema.pattern_properties_listed", 0),
                      ("schema.ref_external", 0), ("schema.ref_variants", 0), ("schema.ref_unresolved", 0),
                      ("schema.unknown_type", 0)):
    GROUPS.setdefault(_key, {})[_quoted] = lambda q: "«" + q[1:-1] + "»" if q[1:-1] else "nada"

# the kind of problem, where the masker's class says it badly; else KIND_WORDS by the class's kind
HEADINGS = {"gbnf.never_finishes": "gramática imposible", "syntax.matches_nothing": "restricción imposible",
            "gbnf.undefined_rule": "error en la gramática", "gbnf.defined_twice": "error en la gramática",
            "gbnf.no_root": "error en la gramática", "gbnf.recursive_no_dfa": "no soportado",
            "schema.unsatisfiable": "esquema imposible", "schema.ref_cycle": "esquema imposible",
            "schema.ref_false": "esquema imposible",
            "choice.empty": "error"}
# an unsupported feature's message says «no está soportado» itself: its heading is neutral
KIND_WORDS = {"syntax error": "error de sintaxis", "unsupported feature": "error",
              "invalid schema": "esquema no válido", "limit": "demasiado grande"}
DETAIL = "detalle del compilador de la máscara, en inglés"


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
    """One of Python ``re``'s error messages in Spanish, without its position; an unknown one
    keeps its English words as a labelled detail."""
    core = re.sub(r" at position \d+( \(line \d+, column \d+\))?$", "", text)
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
    "Invalid control character '\\n' at", included); an unknown one keeps its English words as a
    labelled detail."""
    if msg in JSON_MESSAGES:
        return JSON_MESSAGES[msg]
    for english, spanish in JSON_MESSAGES.items():
        head = english.removesuffix(" at")
        if msg.startswith(head):
            return spanish
    return f"el analizador de JSON no lo acepta (detalle de Python, en inglés: {msg})"


def translate(reason: str) -> tuple[str, str, str] | None:
    """(kind, Spanish message, Spanish fix) for an English reason the catalog knows (the whole
    reason matches one of its patterns), else None."""
    for kind, (pattern, message, fix) in CATALOG.items():
        match = re.fullmatch(pattern, reason, re.DOTALL)
        if match:
            put = GROUPS.get(kind, {})
            groups = tuple(put[i](g) if i in put else ("" if g is None else g)
                           for i, g in enumerate(match.groups()))
            return kind, message.format(*groups), fix.format(*groups)
    return None


def unknown(reason: str, keyword: str | None = None) -> tuple[str, str, str]:
    """(kind "masker.other", Spanish message, "") for a reason the catalog does not know: the
    English words only as a labelled detail."""
    what = (f"la palabra clave «{keyword}» no se puede usar así" if keyword
            else "el compilador de la máscara no acepta esta restricción")
    return "masker.other", f"{what} ({DETAIL}: {reason})", ""


_BOUNDS = [("minimum", "maximum", "number"), ("exclusiveMinimum", "maximum", "number"),
           ("minimum", "exclusiveMaximum", "number"), ("minLength", "maxLength", "string"),
           ("minItems", "maxItems", "list"), ("minProperties", "maxProperties", "object")]
_NONE_ES = {"number": "ningún número", "string": "ninguna cadena", "list": "ninguna lista", "object": "ningún objeto"}


def _why_words(english: bool) -> dict:
    """The reasons of :func:`why_unsatisfiable`, in Spanish or in English (the English edition's
    :mod:`~lesson.laboratorio.errors_en` has no numbers of its own to write: ``words.en_number``)."""
    if english:
        return {"bounds": lambda low, a, high, b, what: (f"“{low}” is {en_number(a)} and “{high}” is "
                                                         f"{en_number(b)}: no {what} satisfies both"),
                "enum": "“enum” is an empty list: it leaves no value",
                "false": lambda name: f"the property “{name}” is required but its schema is false",
                "closed": lambda name: (f"the property “{name}” is required, but \"additionalProperties\": false "
                                        f"allows no property outside “properties”")}
    return {"bounds": lambda low, a, high, b, what: (f"«{low}» vale {es_number(a)} y «{high}» vale "
                                                     f"{es_number(b)}: {_NONE_ES[what]} cumple las dos"),
            "enum": "«enum» es una lista vacía: no deja ningún valor",
            "false": lambda name: f"la propiedad «{name}» es obligatoria pero su esquema es false",
            "closed": lambda name: (f"la propiedad «{name}» es obligatoria, pero \"additionalProperties\": false "
                                    f"no deja ninguna propiedad que no esté en «properties»")}


def why_unsatisfiable(schema, pointer: str = "#", english: bool = False) -> tuple[str, str] | None:
    """Where and why a schema admits no value, for the contradictions a reader types most: a lower
    bound above its upper bound, an empty ``enum``, a required property set to ``false``, or one
    that ``"additionalProperties": false`` shuts out. Returns (JSON pointer of the keyword, reason in
    Spanish, or in English with ``english``), or None when none of them is found."""
    if not isinstance(schema, dict):
        return None
    words = _why_words(english)
    for low, high, what in _BOUNDS:
        a, b = schema.get(low), schema.get(high)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and (a > b or (a == b and "exclusive" in low + high)):
            return f"{pointer}/{high}", words["bounds"](low, a, high, b, what)
    if schema.get("enum") == []:
        return f"{pointer}/enum", words["enum"]
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    listed = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    if schema.get("additionalProperties") is False and not schema.get("patternProperties"):
        for name in required:
            if isinstance(name, str) and name not in listed:
                return f"{pointer}/required", words["closed"](name)
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        for name, sub in (schema.get(key) or {}).items() if isinstance(schema.get(key), dict) else ():
            if sub is False and name in required:
                return f"{pointer}/{key}/{name}", words["false"](name)
            found = why_unsatisfiable(sub, f"{pointer}/{key}/{name}", english)
            if found:
                return found
    for key in ("items", "additionalProperties"):
        found = why_unsatisfiable(schema.get(key), f"{pointer}/{key}", english)
        if found:
            return found
    for i, sub in enumerate(schema.get("allOf") or []):
        found = why_unsatisfiable(sub, f"{pointer}/allOf/{i}", english)
        if found:
            return found
    return None
