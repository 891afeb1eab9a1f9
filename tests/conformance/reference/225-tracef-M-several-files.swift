type file;
file fs[] <fixed_array_mapper; files="225-a.txt 225-b.txt">;
tracef("%M\n", fs);
