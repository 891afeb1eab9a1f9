// dynamic output through simple_mapper: names read back into indices
type file;

file[] a <SimpleMapper; location="outs", prefix="foo", suffix=".out">;

app (file[] oa) gen(int i) {
	bash "-c" "mkdir -p outs; for ((i = 0; i < $0; i++)); do echo test > outs/foo000$i.out; done" i;
}

a = gen(3);

trace(length(a));
