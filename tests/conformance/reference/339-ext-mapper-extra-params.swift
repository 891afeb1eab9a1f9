type file;
file fs[] <ext; exec="339-map.sh", prefix="p-", n=2>;
trace(filenames(fs));
