type vector { int columns[]; }
type matrix { vector rows[]; }
matrix m;
m = readStructured("040-readStructured.in");
trace(m.rows[0].columns);
trace(m.rows[1].columns[2]);
