trace(toFloat("2.5") * 2.0);
trace(toFloat(3));
