// User Guide 2.13
global string greeting = "hello";
(string r) greet() { r = greeting; }
trace(greet());
