string pets[] = ["shane", "noddy", "leo",];
foreach p in pets { trace(p); }
