// User Guide 8.1
trace(@arg("myparam")); trace(@arg("optionalparam", "defaultvalue"));
