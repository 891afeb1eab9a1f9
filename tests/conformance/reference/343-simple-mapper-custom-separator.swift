type file;
app (file o) mk () {
  touch @o;
}
file grid[][] <simple_mapper; prefix="343-g", suffix=".out", separator="-", padding=2>;
grid[3][7] = mk();
