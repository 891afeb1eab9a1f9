type file;
string s = "picture.gif";
file f <regexp_mapper; source=s, match="(.*)gif", transform="\\1jpg">;
trace(@f);
