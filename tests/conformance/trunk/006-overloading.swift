// Overloading by argument types: exact match first, then int widened to float.
import "stdlib.v2";

(int r) f(int x) { r = x + 1; }
(float r) f(float x) { r = x + 2; }
(string r) kind(int x) { r = "int"; }
(string r) kind(string x) { r = "string"; }
(string r) kind(boolean x) { r = "boolean"; }
(float r) half(float x) { r = x / 2; }

assertEqual(f(1), 2);
assertEqual(f(1.0), 3.0);
trace(kind(7), kind("seven"), kind(7 > 1), half(3));
