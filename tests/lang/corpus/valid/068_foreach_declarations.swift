string out[];
foreach i in [0:3] {
    int sq = i * i;
    string s = strcat("sq=", sq);
    out[i] = s;
}
