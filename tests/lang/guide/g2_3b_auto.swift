// User Guide 2.3: auto array (the guide omits the ';' after the append)
int[auto] array; foreach i in [1:100] { array << (i*2); } foreach v in array { trace(v); }
