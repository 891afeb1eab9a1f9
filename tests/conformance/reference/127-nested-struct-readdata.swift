type point { int x; int y; }
point pts[] = readData("127-points.txt");
foreach p, i in pts {
  trace(i, p.x + p.y);
}
