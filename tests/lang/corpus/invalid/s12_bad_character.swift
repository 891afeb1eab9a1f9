// expect: unexpected character '$'
int x = 3 $ 4;
