int a = -5;
trace(a %/ 2, a %% 2, a * -1);
