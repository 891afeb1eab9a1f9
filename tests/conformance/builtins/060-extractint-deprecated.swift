type file;
file f <"n.txt">;
trace(extractint(f), @extractInt(f));
