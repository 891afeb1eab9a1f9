type file;
app (file o) greeting(string left="hi", string right="there") {
    echo left right stdout=@o;
}
file a <"a.txt"> = greeting();
file b <"b.txt"> = greeting(right="you");
file c <"c.txt"> = greeting("hello", right="you");
file d <"d.txt"> = greeting(right="there", left="hi");
