// User Guide 3.2
type file; file f <simple_mapper;prefix="foo", suffix=".txt">;
