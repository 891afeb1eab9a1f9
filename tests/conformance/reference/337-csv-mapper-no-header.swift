type file;
type row { file column1; file column2; }
row rows[] <csv_mapper; file="337-list.txt", header=false>;
trace(@rows[0].column1, @rows[1].column2);
