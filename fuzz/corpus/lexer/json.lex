# json.lex: the tokens of JSON text as lexemes, with a follow relation that
# keeps values and punctuation in a plausible order.  It is a regular
# approximation (nesting is not counted), the kind of lexer a parser drives.
# Whitespace may come between any two lexemes, so it may follow and be
# followed by anything but itself.
lbrace = \{
rbrace = \}
lbrack = \[
rbrack = \]
colon = :
comma = ,
ws = [ \t\n\r]+
string = "([^"\\\x00-\x1f]|\\(["\\/bfnrt]|u[0-9a-fA-F]{4}))*"
number = -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
true = true
false = false
null = null

start: ws lbrace lbrack string number true false null
end: ws rbrace rbrack string number true false null
lbrace -> ws string rbrace
lbrack -> ws lbrace lbrack string number true false null rbrack
rbrace rbrack -> ws comma rbrace rbrack
colon comma -> ws lbrace lbrack string number true false null
string -> ws colon comma rbrace rbrack
number true false null -> ws comma rbrace rbrack
ws -> lbrace rbrace lbrack rbrack colon comma string number true false null
