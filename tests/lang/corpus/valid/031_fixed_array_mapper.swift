type file;
file texts[] <fixed_array_mapper; files="a.txt b.txt, c.txt">;
file t2[] <array_mapper; files=["x.txt", "y.txt"]>;
foreach t in texts { trace(@filename(t)); }
