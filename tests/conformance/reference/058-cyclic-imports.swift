import "058-a";
trace(fa(1), fb(1));
