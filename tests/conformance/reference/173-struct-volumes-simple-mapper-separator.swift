# a small fMRI-like pipeline: procedures declared after use
type voxels;
type header;
type volume {
    voxels v;
    header h;
}
type slice;

volume inputs[] <simple_mapper; prefix="173-fmri.", suffix=".in", separator=".">;
volume aligned[];

foreach inp, i in inputs {
  aligned[i] = align(inputs[i]);
}

app (volume o) align (volume candidate) {
    sh "-c" "cp $0 $1; touch $2" @candidate.v @o.v @o.h;
}

app (volume avg) average (volume candidates[]) {
    touch @avg.v @avg.h;
}

volume brainatlas = average(aligned);

app (slice s) slicer (volume atlas, string axis) {
    echo axis stdout=@s;
}

slice slices[] <simple_mapper; prefix="173-slice.", suffix=".out", separator=".">;
string axes[] = ["x", "y", "z"];
foreach axis, i in axes {
  slices[i] = slicer(brainatlas, axis);
}
trace(length(inputs), @inputs[1].h);
