# digits.lex: one-digit lexemes, each followed by another or ending the
# text.  The same language as the regex [0-9]+ (the narrow case), with a
# lexeme boundary after every byte.
digit = [0-9]
start: digit
end: digit
digit -> digit
