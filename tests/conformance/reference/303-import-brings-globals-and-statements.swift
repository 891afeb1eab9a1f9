import "303-mod";
(string r) greet () {
  r = prefix + "world";
}
trace(greet());
