string t = "my name is John";
string words[] = strsplit(t, "\\s");
trace(words);
