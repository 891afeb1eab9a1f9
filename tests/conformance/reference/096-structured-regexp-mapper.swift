type file;
string s[] = ["picture.gif", "hello.gif", "world.gif"];
file f[] <structured_regexp_mapper; source=s, match="(.*)gif", transform="\\1jpg">;
trace(filenames(f));
