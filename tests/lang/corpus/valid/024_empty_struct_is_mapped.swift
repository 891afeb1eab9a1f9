type messagefile {}
type otherfile {};
app (messagefile t) greeting(string m) { echo m stdout=@filename(t); }
messagefile o <"o.txt"> = greeting("hi");
