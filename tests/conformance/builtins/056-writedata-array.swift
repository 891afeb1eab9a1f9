type file;
file f <"056-writedata-array.out"> = writeData(["x", "y z"]);
