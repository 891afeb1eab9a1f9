type file;
app (file o) bad() { "false" stdout=@o; }
file a <"106.bad">;
a = bad();
string s;
if (length(readData(a)) > 0) { s = "pos"; } else { s = "neg"; }
trace(s);
trace("independent");
