int a = 5; float b = 2.5;
trace(-a, -b, +a, -(-a));
