trace(pad(5, 42), pad(2, 123));
