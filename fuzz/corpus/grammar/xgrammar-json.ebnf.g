g# JSON (RFC 8259) in XGrammar's EBNF, for scripts/ref/xgrammar.js mask.
# The start rule is root; whitespace is space, tab, newline, carriage return;
# strings hold any code point but '"', '\' and controls U+0000..U+001F,
# or an escape.
root   ::= ws value ws
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws "}" | "{" ws member (ws "," ws member)* ws "}"
member ::= string ws ":" ws value
array  ::= "[" ws "]" | "[" ws value (ws "," ws value)* ws "]"
string ::= "\"" char* "\""
char   ::= [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
ws     ::= [ \t\n\r]*
