// warns: unknown mapper type: 'no_such_mapper'
type file;
file f <no_such_mapper; file="x">;
