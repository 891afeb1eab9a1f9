type file;
type circle {
  int x;
  int y;
  float r;
  string name;
}
app (file f) createFloat () {
  echo "3.1400001" stdout=@filename(f);
}
file h <"175-float.in">;
h = createFloat();
float fl = readData(h);
circle c = readData("175-circle.in");
trace(strcat(fl), strcat(c.x, " ", c.y, " ", c.r, " ", c.name));
