type file;
app (file o) cat(file i) { cat @i stdout=@o; }
file texts[] <fixed_array_mapper; files="file1.txt, fileB.txt, file3.txt">;
file o <"008-fixed-array-mapper.out"> = cat(texts[1]);
trace(filenames(texts));
