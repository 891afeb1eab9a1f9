// Java 8 printed integral doubles in [2^53, 2^63) with their exact digits
float big = 123456789.0 * 1234567891.0;
trace(big);
trace(1.0 / 3.0 * 100000000000.0 * 1000000000.0);
