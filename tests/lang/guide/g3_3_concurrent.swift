// User Guide 3.3
type file;
file f1; file f2 <concurrent_mapper;prefix="foo", suffix=".txt">;
