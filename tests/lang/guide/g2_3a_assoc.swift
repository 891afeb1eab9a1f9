// User Guide 2.3: associative array
float[string] a; a["one"] = 0.2; a["two"] = 0.4;
