type file;
app (file o) greet(string m) { echo m stdout=@o; }
file f <"sub/dir/out.txt"> = greet("hi");
trace(filename(f));
trace(dirname(f));
trace(@f);
