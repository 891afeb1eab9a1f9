(int r) fib (int n) {
  if (n < 2) {
    r = n;
  } else {
    r = fib(n - 1) + fib(n - 2);
  }
}
trace(fib(12));
