string[boolean] a;
a[true] = "T"; a[false] = "F";
trace(a);
