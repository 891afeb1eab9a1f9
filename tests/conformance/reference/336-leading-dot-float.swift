float f = .5;
float g = .9e3;
trace(f + g);
