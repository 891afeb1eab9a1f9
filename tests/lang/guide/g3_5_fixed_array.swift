// User Guide 3.5
type file;
file texts[] <fixed_array_mapper;files="file1.txt, fileB.txt, file3.txt">;
