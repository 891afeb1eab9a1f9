type messagefile {}
(messagefile t) greeting() {
    app {
        echo "hello" stdout=@filename(t);
    }
}
messagefile outfile = greeting();
messagefile o2 = greeting(), o4 = greeting(), o5, o6[], o7 = greeting();
o6[0] = greeting();
o6[1] = greeting();
o5 = greeting();
o6[2] = greeting();
trace(length(o6));
