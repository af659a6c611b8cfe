g# JSON (RFC 8259) in GBNF, in the style of llama.cpp's grammars/json.gbnf:
# a whole document, with the whitespace RFC 8259 allows around values.
root   ::= ws value ws

value  ::= object | array | string | number | "true" | "false" | "null"

object ::= "{" ws "}"
         | "{" ws member (ws "," ws member)* ws "}"
member ::= string ws ":" ws value

array  ::= "[" ws "]"
         | "[" ws value (ws "," ws value)* ws "]"

# unescaped: any code point but '"', '\' and the controls U+0000-U+001F
string ::= "\"" char* "\""
char   ::= [^"\\\x00-\x1F]
         | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})

number ::= "-"? int frac? exp?
int    ::= "0" | [1-9] [0-9]*
frac   ::= "." [0-9]+
exp    ::= [eE] [-+]? [0-9]+

ws     ::= [ \t\n\r]*
