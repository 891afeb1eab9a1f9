// User Guide 3.4
type file;
file texts[] <filesys_mapper;prefix="foo", suffix=".txt">;
