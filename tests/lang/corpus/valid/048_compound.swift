type file;
app (file o) first(file i) { cp @i @o; }
app (file o) second(file i) { cp @i @o; }
(file output) process (file input) {
    file intermediate;
    intermediate = first(input);
    output = second(intermediate);
}
file x <"x.txt">;
file y <"y.txt">;
y = process(x);
