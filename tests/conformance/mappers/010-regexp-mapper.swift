type file;
app (file o) greet(string m) { echo m stdout=@o; }
string s = "picture.gif";
file f <regexp_mapper; source=s, match="(.*)gif", transform="\\1jpg">;
f = greet("img");
trace(@f);
