float s = @java("java.lang.Math", "sin", 0.5);
trace(s);
