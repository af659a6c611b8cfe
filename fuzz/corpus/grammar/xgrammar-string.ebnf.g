g# One JSON string (RFC 8259), quotes included, in XGrammar's EBNF (start rule
# root): the language of tokbench's --regex
# "([^"\\\x00-\x1f]|\\(["\\/bfnrt]|u[0-9a-fA-F]{4}))*", to compare masks.
root ::= "\"" char* "\""
char ::= [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
