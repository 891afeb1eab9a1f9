type file;
app (file o) sim(int steps) {
    profile "maxwalltime" = "00:05:00";
    profile "count" = 2;
    simulate "-n" steps stdout=@o;
}
file out <"sim.out"> = sim(10);
