"""GBNF grammars shared by the CFG tests: (id, GBNF text, accepted texts, rejected texts).

Chosen so that llguidance's greedy lexemes cannot change the language (every repeated class
is followed by a delimiter it cannot contain), which lets them serve as oracle cases too.
"""

GRAMMARS = [
    ("parens", 'root ::= "(" root ")" root | ""', ["", "()", "(()())()"], ["(", ")(", "(()"]),
    ("arith-left", """
root ::= expr
expr ::= expr "+" term | expr "-" term | term   # left recursion
term ::= term "*" factor | factor
factor ::= [0-9]+ | "(" expr ")"
""", ["1", "12+3*4", "(1+2)*3-4"], ["1+", "+1", "(1", "1**2"]),
    ("nested-list", """
root ::= "[" (item ("," item)*)? "]"
item ::= [a-zñáéíóú]+ | root
""", ["[]", "[año,[señor,[]],b]"], ["[,]", "[a,]", "[A]"]),
    ("json-ish", r"""
root   ::= value
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ( string ":" value ( "," string ":" value )* )? "}"
array  ::= "[" ( value ( "," value )* )? "]"
string ::= "\"" ( [^"\\\x00-\x1f] | "\\" ["\\/bfnrt] )* "\""
number ::= "-"? [0-9]+ ( "." [0-9]+ )?
""", ['{"a":[1,2.5,{"ñ":"«x»"}]}', '"\\n"', "-0.5", "[]"], ['{"a"}', "[1,]", '"\\x"', "01."]),
    ("spanish-sentence", """
root ::= sujeto " " verbo ("." | "!" | " — dijo.")
sujeto ::= "el señor" | "la señora" | "Benina" | "doña Paca"
verbo ::= "habló" | "calló" | "pidió limosna"
""", ["Benina pidió limosna.", "el señor calló — dijo."], ["Benina", "la señora habló?"]),
    ("keywords", """
root ::= stmt+
stmt ::= ("si" | "no" | ident) ";"
ident ::= [a-z] [a-z0-9]*
""", ["si;", "no;x1;sino;"], ["", "si", "1a;"]),
    ("sexpr", """
root ::= "(" elem (" " elem)* ")"
elem ::= atom | root
atom ::= [a-z0-9]+
""", ["(a)", "(def (f x) (g x 1))"], ["()", "(a )", "(a"]),
    ("dyck2", 'root ::= ( "(" root ")" | "[" root "]" )*', ["", "([])[]", "[[()]]"], ["(]", "[(])"]),
    ("guillemets", """
root ::= "«" frase "»"
frase ::= palabra (" — " palabra)*
palabra ::= [a-záéíóúñ]+
""", ["«año»", "«sí — señor»"], ["«»", "«a —b»", "<a>"]),
    ("palindrome", 'root ::= "a" root "a" | "b" root "b" | "a" | "b" | ""', ["", "aba", "abba"],
     ["ab", "aab"]),
    ("anbn", 'root ::= "a" root "b" | ""', ["", "ab", "aaabbb"], ["a", "aab", "ba"]),
    ("right-list", """
root ::= item | item "," root
item ::= [0-9]
""", ["1", "1,2,3"], ["", "1,", "12"]),
    ("nested-object", r"""
root ::= obj
obj ::= "{" ( pair ( "," pair )* )? "}"
pair ::= "\"" [a-z]+ "\":" ( obj | [0-9]+ )
""", ['{}', '{"a":1,"b":{"c":{}}}'], ['{"a"}', '{"a":}', '{a:1}']),
    ("bounded-repeat", """
root ::= ("ab" | "c"){2,4} "!" nested
nested ::= "<" nested ">" | ""
""", ["abc!", "cccc!<<>>"], ["c!", "ccccc!", "cc!<"]),
    ("escapes", r"""
root ::= "\u00f1" root | "\x41\t" | [\u00e0-\u00e5]
""", ["ññA\t", "à", "ñå"], ["ñ", "A", "æ"]),
    ("arith-ws", """
root ::= expr
expr ::= term ((" + " | " - ") term)*
term ::= "-"? ([0-9]+ | "(" expr ")")
""", ["1 + -2", "-(3 - 4) + 5"], ["1+2", "1 + ", "--1"]),
    ("regular-greeting", """
root ::= greet ", " name "."
greet ::= "hola" | "buenos días"
name ::= [A-ZÁÉÍÓÚÑ] [a-záéíóúñ]*
""", ["hola, Ñoño.", "buenos días, Benina."], ["hola, ana.", "hola Ana."]),
    ("emoji", """
root ::= face (" " face)*
face ::= "😀" | "🙂" | "😀😀"
""", ["😀", "🙂 😀😀"], ["😀🙂", " 😀"]),
]
