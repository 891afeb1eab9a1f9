int[auto] array;
foreach i in [1:100] {
    array << (i*2);
}
foreach v in array {
    trace(v);
}
