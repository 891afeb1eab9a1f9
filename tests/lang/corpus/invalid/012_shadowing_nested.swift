// expect: Variable x, on line 4, was already defined on line 2
int x = 1;
if (true) {
    int x = 2;
}
