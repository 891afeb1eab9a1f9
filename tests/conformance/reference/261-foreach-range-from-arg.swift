int n = toInt(@arg("steps"));
int sq[];
foreach i in [1:n] {
  sq[i] = i * i;
}
trace(sq);
