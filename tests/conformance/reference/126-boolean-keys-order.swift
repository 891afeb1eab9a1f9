string b[boolean];
b[true] = "yes";
b[false] = "no";
trace(b);
