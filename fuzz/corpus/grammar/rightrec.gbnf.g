g# Right recursion: a list built by a rule that ends in itself.
root ::= list
list ::= item "," list | item
item ::= [a-z]+
