type file;
type row { file column1; file column2; file column3; }
row rows[] <csv_mapper; file="370-list.txt", header=false, skip=1>;
trace(@rows[1].column3, @rows[0].column1, length(rows));
