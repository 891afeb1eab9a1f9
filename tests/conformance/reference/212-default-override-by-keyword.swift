type messagefile {}
(messagefile t) greeting(string left="hi", string right) {
    app {
        echo left right stdout=@filename(t);
    }
}
messagefile outfile <"212-default-override-by-keyword.out">;
outfile = greeting(left="foo", right="there");
