float f = 3;
float g = 1 + 2.5;
float arr[] = [1.0, 2.0, 3.5];
boolean b = 1 < 2.5;
(float r) half(float x) { r = x / 2; }
trace(half(3), f, g, arr[1], b);
