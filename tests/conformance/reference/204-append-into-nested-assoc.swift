int array[int][string][auto];
array[1]["hey"] << 5;
array[1]["hey"] << 10;
array[2]["ho"] << 20;
foreach v, i in array[1]["hey"] {
  trace("hey", array[1]["hey"][i]);
}
trace(length(array[1]["hey"]), length(array[2]["ho"]));
