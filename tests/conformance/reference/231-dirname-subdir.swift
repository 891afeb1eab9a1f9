type file;
file f <"231-sub/data.txt">;
trace(dirname(f), filename(f));
