// line comment
# shell comment
/* block
 comment */
trace("ok"); // trailing
