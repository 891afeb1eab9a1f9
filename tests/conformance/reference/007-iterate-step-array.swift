int step[];
step[0] = 1;
iterate ix {
  step[ix+1] = step[ix] * 2;
} until (ix >= 4);
trace(step);
