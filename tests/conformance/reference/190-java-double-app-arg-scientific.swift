type file;
app (file o) show (float f) {
  echo f stdout=@o;
}
file o <"190-java-double-app-arg-scientific.out">;
o = show(1.0 / 10000.0);
