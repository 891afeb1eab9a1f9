string p[] = strsplit("a  b\tc", "\\s+");
trace(p);
