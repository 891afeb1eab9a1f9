type file;
app (file o[]) gen () {
  touch @filenames(o);
}
file outs[] <fixed_array_mapper; files="170-a.txt, 170-b.txt">;
outs = gen();
trace(length(outs));
