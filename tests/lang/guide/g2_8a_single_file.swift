// User Guide 2.8: mapping descriptors
type imagefile; type binaryfile;
imagefile f1<single_file_mapper;file="/home/yongzh/data/file1.bin">;
binaryfile f2<"/home/yongzh/data/file1.bin">;
