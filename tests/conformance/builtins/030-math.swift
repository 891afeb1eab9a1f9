trace(floor(2.7), ceil(2.1), sqrt(16.0), pow(2.0, 10.0));
trace(min(3, 5), max(3, 5), abs(-4));
