g# Arithmetic: the language of arith.lark without blanks, as an ambiguous,
# left-recursive GBNF grammar (llama.cpp itself refuses left recursion).
root   ::= expr
expr   ::= expr "+" expr | expr "*" expr | "(" expr ")" | number
number ::= [0-9]+
