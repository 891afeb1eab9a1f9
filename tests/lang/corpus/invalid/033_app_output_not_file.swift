// expect: Output o of app procedure f has type int: app outputs must be mapped (file) types or external
app (int o) f() { echo "x"; }
