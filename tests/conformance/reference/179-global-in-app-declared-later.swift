type messagefile;
(messagefile t) greeting() {
    app {
        echo m stdout=@filename(t);
    }
}
global string m = "hello";
messagefile outfile <"179-global-in-app-declared-later.out">;
outfile = greeting();
