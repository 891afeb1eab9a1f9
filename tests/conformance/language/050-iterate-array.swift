int step[];
step[0] = 1;
iterate i { step[i + 1] = step[i] * 2; } until (i == 5);
trace(step);
