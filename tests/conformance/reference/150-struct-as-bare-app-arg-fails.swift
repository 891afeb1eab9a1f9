// THIS-SCRIPT-SHOULD-FAIL
type file;
type S { int a; }
app (file o) show (S s) {
  echo s stdout=@o;
}
S s;
s.a = 1;
file o <"150-o.txt">;
o = show(s);
