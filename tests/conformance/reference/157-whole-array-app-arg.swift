type file;
app (file t) show (int v[]) {
  echo "values:" v stdout=@t;
}
int v[];
v[2] = 30;
v[0] = 10;
v[1] = 20;
file o <"157-whole-array-app-arg.out">;
o = show(v);
