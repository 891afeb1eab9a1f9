type file;
app (file o) show (float a, float b) {
  echo a b stdout=@o;
}
file o <"143-float-app-args.out">;
o = show(1.0 / 3.0, 2.5 * 2);
