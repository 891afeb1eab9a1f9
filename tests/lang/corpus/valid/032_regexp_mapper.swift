type file;
file s <"picture.gif">;
file f <regexp_mapper; source=@s, match="(.*)gif", transform="\\1jpg">;
file g[] <structured_regexp_mapper; source=["a.gif", "b.gif"], match="(.*)gif", transform="\\1jpg">;
trace(@f);
