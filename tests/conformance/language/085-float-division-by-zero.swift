float z = 0.0;
trace(1 / z, -1 / z);
