type file;
app (file o) mk () {
  touch @o;
}
file cube[][][] <simple_mapper; prefix="340-c.", suffix=".dat">;
file sq[][] <simple_mapper; prefix="340-s.", suffix=".dat">;
cube[1][2][3] = mk();
sq[4][5] = mk();
