global string greeting = "hello";
global int n = 3;
(string r) hi (string who) {
  r = greeting + " " + who + " " + n;
}
trace(hi("world"));
