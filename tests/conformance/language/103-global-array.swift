global int squares[] = [0, 1, 4, 9];
(int r) sq(int i) { r = squares[i]; }
trace(sq(3));
