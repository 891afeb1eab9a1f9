int[auto] a;
int[auto] b;
a << 1;
a << 2;
foreach v, k in a {
    b[k] = a[k] * 2;
}
