string a[];
a[5] = "five";
a[-1] = "minus one";
a[10] = "ten";
a[2] = "two";
trace(a);
