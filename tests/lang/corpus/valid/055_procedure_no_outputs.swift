type file;
check_order(file a[]) {
    foreach f in a {
        trace(@f);
    }
}
file ins[] <filesys_mapper; pattern="*">;
check_order(ins);
