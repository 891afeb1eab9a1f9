// dynamic output: the app creates an unknown number of files; filesys_mapper lists them
// afterwards (the engine stages back what mapper.stage_out_globs() names: outs/*.out)
type file;

file[] a <FilesysMapper; location="outs", pattern="*.out">;

app (file[] oa) gen(int i) {
	bash "-c" "mkdir -p outs; for ((i = 0; i < $0; i++)); do echo test > outs/foo000$i.out; done" i;
}

a = gen(3);

trace(length(a));
trace(filenames(a));
