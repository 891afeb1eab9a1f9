printf("x=%i y=%s\n", 5, "z");
