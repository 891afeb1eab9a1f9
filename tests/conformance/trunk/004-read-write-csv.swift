// CSV: header of field names in declaration order, strings double-quoted, a chosen
// separator; read back into a struct array.
import "stdlib.v2";
type file;
type row { string name; int n; float x; boolean ok; }

row[] rows;
rows[0].name = "plain"; rows[0].n = 1; rows[0].x = 1.5; rows[0].ok = true;
rows[1].name = "with, comma and \"quotes\""; rows[1].n = -2; rows[1].x = 3.0; rows[1].ok = false;

string[string] opts;
opts["separator"] = ",";
file out <"rows.csv">;
out = write(rows, format = "CSV", options = opts);
row[] back = read(out, format = "CSV", options = opts);

file tabbed <"one.csv">;
tabbed = write(rows[1], "CSV");
row one = read(tabbed, "CSV");

foreach r, i in back {
  assertEqual(r.name, rows[i].name);
  assertEqual(r.n, rows[i].n);
  assertEqual(r.x, rows[i].x);
  assertEqual(r.ok, rows[i].ok);
}
trace(one.name, one.n, one.x, one.ok);
