// an app whose whole output array is mapped by fixed_array_mapper: the elements come
// from the mapper, the app writes them in its job directory, they are staged back
type file;

app (file[] o) split(file i) {
	split "-l" 1 filename(i) "seqout.";
}

file[] out <FixedArrayMapper; files="seqout.aa, seqout.ab, seqout.ac">;
file input <"split.in">;
out = split(input);
trace(length(out));
