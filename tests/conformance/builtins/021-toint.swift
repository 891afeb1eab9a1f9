trace(toInt("010") + toInt("99"));
trace(toint("7") * 2);
