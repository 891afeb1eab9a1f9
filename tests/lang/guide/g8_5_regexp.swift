// User Guide 8.5
string v = @regexp("abcdefghi", "c(def)g","monkey");
