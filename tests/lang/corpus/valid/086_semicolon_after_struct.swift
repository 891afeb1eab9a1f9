type point { int x; int y; };
point p;
p.x = 1;
p.y = 2;
