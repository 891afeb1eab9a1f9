int fork = 3; string ifx = "i";
trace(fork, ifx);
