type messagefile;
(messagefile a, messagefile b) greeting(string m) {
    app {
        echo m stdout=@filename(a) stderr=@filename(b);
    }
}
messagefile first <"185-multi-return-bind-by-name.out">;
messagefile second <"185-err.txt">;
(second = b, first = a) = greeting("hi");
