// Trunk's initializers: {field: value} makes a struct of the type the context expects,
// {key: value} a sparse array; written with FV and read back.
import "stdlib.v2";
type file;
type rec { string name; int n; float w; boolean on; }

rec[] rows;
rows = [{name: "alpha", n: 1, w: 2, on: true},
        {on: false, w: 0.5, n: 2, name: "beta"}];
file f <"rows.fv">;
f = write(rows, format = "FV");
rec[] back = read(f, format = "FV");
assertEqual(length(back), 2);
assertEqual(back[1].name, "beta");
assertAlmostEqual(back[0].w, 2.0, 0.0);

string[string] sep = {"separator": ","};
file c <"rows.csv"> = write(rows, format = "CSV", options = sep);
float[int] sparse = {5: 1, -1: 2.5};
trace(sparse);
trace(back[0].name, back[0].w, back[1].on);
