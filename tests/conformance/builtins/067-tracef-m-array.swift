type file;
file fs[] <fixed_array_mapper; files="x.txt y.txt">;
tracef("one:%M\n", fs[0]);
tracef("all:%M\n", fs);
