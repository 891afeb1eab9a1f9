type file;
app (file o) greet(string m) { echo m stdout=@o; }
file f <"deep/er/026.txt"> = greet("d");
trace(dirname(f));
