trace(arg("myparam"));
trace(arg("optionalparam", "defaultvalue"));
trace(@arg("n"));
