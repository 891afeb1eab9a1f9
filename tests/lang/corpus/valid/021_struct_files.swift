type headerfile;
type voxelfile;
type volume { headerfile h; voxelfile v; }
volume brain <simple_mapper; prefix="brain">;
app (headerfile o) p(headerfile i) { cp @i @o; }
headerfile o = p(brain.h);
