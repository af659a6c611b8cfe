g# Nullable rules: every item may be empty, and so may the whole text.
root ::= a b a
a    ::= "x"*
b    ::= ("y" c)?
c    ::= "" | "z" c
