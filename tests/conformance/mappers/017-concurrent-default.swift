type file;
app (file o) greet(string m) { echo m stdout=@o; }
file f = greet("tmp");
trace(regexp(filename(f), "^run[0-9]+/_concurrent/.+$", "under-run-dir"));
