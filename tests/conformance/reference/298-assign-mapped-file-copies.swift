type file;
app (file o) gen () {
  echo "content" stdout=@o;
}
file a <"298-a.txt">;
file b <"298-assign-mapped-file-copies.out">;
a = gen();
b = a;
