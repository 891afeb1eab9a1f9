float p = java("java.lang.Math", "pow", 2.0, 10.0);
float s = java("java.lang.Math", "sqrt", 16.0);
trace(p, s);
