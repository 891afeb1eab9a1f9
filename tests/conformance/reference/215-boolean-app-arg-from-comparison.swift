type messagefile {}
(messagefile t) greeting(boolean b) {
    app {
        echo b stdout=@filename(t);
    }
}
messagefile outfile <"215-boolean-app-arg-from-comparison.out">;
int i = 2;
boolean r = i == 2;
outfile = greeting(r);
