// User Guide 2.1: atomic variable
string astring = "hello";
