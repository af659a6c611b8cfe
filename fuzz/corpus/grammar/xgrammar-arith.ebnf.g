g# Arithmetic expressions in XGrammar's EBNF (start rule root): integers,
# + - * /, parentheses, optional spaces between tokens.
root   ::= sp expr sp
expr   ::= term (sp [-+] sp term)*
term   ::= factor (sp [*/] sp factor)*
factor ::= [0-9]+ | "(" sp expr sp ")"
sp     ::= " "*
