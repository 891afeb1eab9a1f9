import "058-a";
(int r) fb (int x) { r = x + 2; }
