trace(arg("expr"), arg("empty", "dflt"));
