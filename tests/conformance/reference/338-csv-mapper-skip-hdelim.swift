type file;
type row { file left; file right; }
row rows[] <csv_mapper; file="338-list.txt", skip=1, hdelim="|">;
trace(length(rows), @rows[0].right);
