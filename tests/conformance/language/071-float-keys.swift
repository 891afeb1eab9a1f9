string[float] a;
a[2.5] = "b"; a[-1.0] = "a";
trace(a);
