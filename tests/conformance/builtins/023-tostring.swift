trace(toString(1.0), toString(7), toString(true), toString(1.0) + "!");
