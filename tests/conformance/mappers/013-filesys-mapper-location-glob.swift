type file;
file deep[] <filesys_mapper; location="data", pattern="**/*.csv">;
file flat[] <FilesysMapper; location="data", pattern="*.csv">;
trace(filenames(deep));
trace(filenames(flat));
