// User Guide 2.6: complex types
type headerfile; type voxelfile; type volume { headerfile h; voxelfile v; }
app (headerfile o) p(headerfile i) { p @i @o; }
volume brain; headerfile o; o = p(brain.h);
