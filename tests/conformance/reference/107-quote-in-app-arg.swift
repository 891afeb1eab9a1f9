type messagefile;
(messagefile t) quoted() {
    app {
        echo "say \"hi\"" stdout=@filename(t);
    }
}
messagefile outfile <"107-quote-in-app-arg.out">;
outfile = quoted();
