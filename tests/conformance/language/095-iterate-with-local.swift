iterate i { int j = i * 2; trace(j); } until (i >= 3);
