type file;
app (file o) greeting(string left="hi", string right) {
    echo left right stdout=@o;
}
file o <"o.txt"> = greeting(right="there");
