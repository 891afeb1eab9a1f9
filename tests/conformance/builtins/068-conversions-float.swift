trace(toInt(3.99), toInt(-3.99), toFloat("1e3"), toString(0.1 + 0.2));
trace(java("java.lang.Math", "pow", 2.0, 0.5), java("java.lang.Math", "abs", -7));
