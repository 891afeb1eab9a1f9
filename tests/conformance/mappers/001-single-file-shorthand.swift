type file;
app (file o) greet(string m) { echo m stdout=@o; }
file f <"001-single-file-shorthand.out">;
f = greet("hi there");
