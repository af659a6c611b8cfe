# strbody.lex: the body of a JSON string up to its closing quote, as two
# lexemes.  The same language as the regex [^"\\\x00-\x1f]*" of the default
# suite's JSON-string rows, so that a walk row of each, side by side, gives
# what the lexer's bookkeeping costs per visited node (most of the trie is
# visited from the start state).
chars = [^"\\\x00-\x1f]+
quote = "
start: chars quote
end: quote
chars -> quote
quote ->
