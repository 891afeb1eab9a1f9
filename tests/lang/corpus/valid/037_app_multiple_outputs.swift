type messagefile;
app (messagefile a, messagefile b) greeting(string m) {
    echo m stdout=@filename(a) stderr=@filename(b);
}
messagefile x <"x.txt">, y <"y.txt">;
(x, y) = greeting("hi");
