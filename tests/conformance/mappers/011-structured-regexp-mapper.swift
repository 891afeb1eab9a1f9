type file;
app (file o) greet(string m) { echo m stdout=@o; }
string s[] = ["picture.gif", "hello.gif", "world.gif"];
file f[] <structured_regexp_mapper; source=s, match="(.*)gif", transform="\\1jpg">;
foreach v, i in s {
  f[i] = greet(v);
}
trace(filenames(f));
