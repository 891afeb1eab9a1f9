type file;
app (file outf) count1 (file[] infs) {
	sh "-c" "echo $@; echo $#" "sh" filename(infs) stdout = filename(outf);
}
app (file outf) count2 (file[] infs) {
	sh "-c" "echo $@; echo $#" "sh" filenames(infs) stdout = filename(outf);
}
file[] infs <FixedArrayMapper; files=["131-1.in", "131-2.in", "131-3.in"]>;
file outf1 <"131-filename-one-word-filenames-many.out">;
file outf2 <"131-two.txt">;
outf1 = count1(infs);
outf2 = count2(infs);
