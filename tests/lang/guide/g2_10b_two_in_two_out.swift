// User Guide 2.10: (type3 out1, type4 out2) myproc (type1 in1, type2 in2)
type type1; type type2; type type3; type type4;
app (type3 out1, type4 out2) myproc (type1 in1, type2 in2) { myproc @in1 @in2 @out1 @out2; }
