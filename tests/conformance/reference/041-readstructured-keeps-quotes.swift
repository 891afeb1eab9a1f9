type R { string rows[]; }
R r = readStructured("041-in.txt");
trace(r.rows[0]);
