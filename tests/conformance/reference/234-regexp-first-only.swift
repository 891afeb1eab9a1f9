trace(regexp("a-b-c", "-", "+"), regexp("x.y", "\\.", "!"));
