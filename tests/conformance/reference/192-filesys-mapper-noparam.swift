type myfile;
myfile v[] <filesys_mapper;>;
trace("mapped");
