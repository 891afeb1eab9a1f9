// 0.96 keeps the quotes of string values in readStructured files
type pair { string a; int b; }
pair p = readStructured("pair.in");
trace(p.a, p.b);
