type file;
app (file o) cat(file i) { cat @i stdout=@o; }
file src <"input.dat">;
file o <regexp_mapper; source=@src, match="(.*)\\.dat", transform="\\1.copy">;
o = cat(src);
trace(@o);
