// line comment
# shell comment
/* block
   comment */
int x = 3; // trailing
trace(x); # trailing hash
