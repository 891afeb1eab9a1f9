import "058-b";
(int r) fa (int x) { r = x + 1; }
