// User Guide 2.11.1: foreach in a procedure
type file;
app compute(file f) { compute @f; }
check_order (file a[]) { foreach f in a { compute(f); } }
