type file;
file f1 <single_file_mapper; file="/home/yongzh/data/file1.bin">;
file f2 <SingleFileMapper; file="data.bin">;
file f3 <"data3.bin">;
