# two lexemes, a follow rule and an explicit end
word = [a-z]+
sp = [ ]
start: word
end: word
word -> sp
sp -> word
