type file;
