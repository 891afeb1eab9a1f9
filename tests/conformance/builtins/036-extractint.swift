type file;
app (file o) num() { echo "42" stdout=@o; }
file f = num();
trace(extractInt(f) + 1);
