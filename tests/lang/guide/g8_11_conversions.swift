// User Guide 8.11-8.15
int i = @toInt(@arg("n", "3"));
float f = @toFloat(@arg("x", "1.5"));
string s = @toString(i);
int l = @length([1, 2, 3]);
float j = @java("java.lang.Math", "sin", 0.5);
