global string prefix = "hello ";
trace("module loaded");
