type bag { int items[auto]; string label; }
bag b;
b.label = "L";
foreach i in [1:3] {
  b.items << i * 100;
}
int n = length(b.items);
trace(b.label, n);
