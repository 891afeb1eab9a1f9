type file;
type myint int;
type image file;
myint x = 3;
int y = x + 1;
image i <"a.jpg">;
trace(y);
