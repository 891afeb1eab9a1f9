type file;
type row { file left; file right; }
row rows[] <csv_mapper; file="pairs.csv", header=true, skip=0, delim=",">;
foreach r in rows { trace(@r.left); }
