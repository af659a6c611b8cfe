# json_tokens.lex: the lexemes of json.lex with no follow relation (any
# lexeme after any, any may begin or end the text).  The same language as
# the single regex
#   (\{|\}|\[|\]|:|,|[ \t\n\r]+|"([^"\\\x00-\x1f]|\\(["\\/bfnrt]|u[0-9a-fA-F]{4}))*"|-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?|true|false|null)+
# which a re: row walks beside it: twelve lexemes and a boundary that may
# fall anywhere, against one regex DFA.
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
start: *
