float a = sqrt(2.0) + sin(1) + pow(2, 10) + log(8, 2);
int m = max(3, 4);
float n = min(1.5, 2);
int s = sum([1, 2, 3]);
float av = avg([1.0, 2.0]);
trace(a, m, n, s, av, abs(-3), isNaN(0.0));
