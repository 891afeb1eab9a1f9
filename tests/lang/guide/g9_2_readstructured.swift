// User Guide 9.2
type vector { int columns[]; } type matrix { vector rows[]; } matrix m; m = readStructured("readStructured.in");
