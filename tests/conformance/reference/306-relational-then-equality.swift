trace(1 < 2 == true, true == 1 < 2, 2 >= 3 != false);
