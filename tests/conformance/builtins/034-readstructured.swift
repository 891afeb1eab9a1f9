type vector { int columns[]; }
type matrix { vector rows[]; }
matrix m;
m = readStructured("matrix.in");
trace(m.rows[0].columns);
trace(m.rows[1].columns[2]);
