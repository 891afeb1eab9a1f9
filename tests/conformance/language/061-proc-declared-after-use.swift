trace(later(2));
(int r) later(int x) { r = x + 1; }
