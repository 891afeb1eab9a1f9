type file;
app (file o[]) gen () {
  touch @o[0] @o[1];
}
file outs[] <fixed_array_mapper; files="171-a.txt, 171-b.txt">;
outs = gen();
trace(length(outs));
