trace(toFloat(3), toFloat("1e3"), toFloat("-0.5"));
