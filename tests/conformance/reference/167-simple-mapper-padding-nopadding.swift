type file;
app (file o) put (int i) {
  echo i stdout=@o;
}
file a[] <simple_mapper; prefix="167-pad.", suffix=".out", padding=9>;
file b[] <simple_mapper; prefix="167-nopad.", suffix=".out", padding=0>;
a[0] = put(0);
b[75943] = put(1);
