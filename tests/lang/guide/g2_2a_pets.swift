// User Guide 2.2: array of strings
string pets[] = ["shane", "noddy", "leo"];
