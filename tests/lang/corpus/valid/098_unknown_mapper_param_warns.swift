// warns: simple_mapper does not support a 'noauto' parameter
type file;
file f[] <simple_mapper; prefix="x", noauto=true>;
