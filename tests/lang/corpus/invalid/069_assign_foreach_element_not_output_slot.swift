// expect: 13:21: Cannot assign to loop variable v
// expect: 14:19: Cannot assign to loop variable f
// expect: 15:26: Cannot assign to loop variable k
// expect: 16:19: Cannot assign to loop variable s
type file;
type S { file x; int n; }
app (file t) echo (string s) { echo s stdout=@filename(t); }
int nums[] = [1, 2];
file fs[];
fs[0] = echo("a");
file mapped[] <fixed_array_mapper; files="m1.txt, m2.txt">;
S ss[] <simple_mapper; prefix="s">;
foreach v in nums { v = 3; }
foreach f in fs { f = echo("unmapped array: no slot to write"); }
foreach m, k in mapped { k = 1; }
foreach s in ss { s.n = 1; }
