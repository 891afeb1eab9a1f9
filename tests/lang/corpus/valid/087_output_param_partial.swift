(int r[]) fill(int n) {
    foreach i in [0:n] {
        r[i] = i * i;
    }
}
int sq[] = fill(4);
trace(sq[2]);
