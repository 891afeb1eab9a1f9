type file;
file inputs[] <filesys_mapper; location=@arg("dir"), suffix=".csv">;
foreach f, i in inputs {
  trace(i, @f);
}
