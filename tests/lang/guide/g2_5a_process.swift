// User Guide 2.5: compound procedure
type file;
app (file o) first(file i) { first @i @o; }
app (file o) second(file i) { second @i @o; }
(file output) process (file input) { file intermediate; intermediate = first(input); output = second(intermediate); } file x <"x.txt">; file y <"y.txt">; y = process(x);
