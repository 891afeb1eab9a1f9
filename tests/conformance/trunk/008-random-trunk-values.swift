// randomInt/randomFloat/randomGaussian give trunk's numbers for (seed, sequence)
// (values computed by trunk's algorithm on a JVM).
import "stdlib.v2";

trace(randomInt(1234, 1, -10, 10), randomInt(1, 2, 0, 100), randomInt(99999, 123456, -1000000, 1000000));
trace(randomFloat(4321, 1, -10.0, 10.0));
trace(randomGaussian(2314, 1), randomGaussian(2314, 2), randomGaussian(-5, -3));
