// User Guide 2.2: sequential iteration (with the procedures it calls declared, and
// the until clause iterate requires)
type file;
app (file o) initialCondition() { init @o; }
app (file o) simulate(file i) { sim @i @o; }
file step[];
step[0] = initialCondition(); iterate ix { step[ix] = simulate(step[ix-1]); } until (ix == 10);
