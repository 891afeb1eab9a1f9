type file;
file fs[] <filesys_mapper; location="344-tree", pattern="**/*.txt">;
foreach f, i in fs {
  trace(i, @f);
}
