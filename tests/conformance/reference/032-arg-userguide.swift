trace(@arg("myparam"));
trace(@arg("optionalparam", "defaultvalue"));
int n = toInt(arg("n", "10"));
trace(n * 2);
