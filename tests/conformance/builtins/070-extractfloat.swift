type file;
app (file o) num() { echo "2.5" stdout=@o; }
file f = num();
trace(extractFloat(f) * 2.0);
