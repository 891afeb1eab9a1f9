import "304-apps";
file o <"304-import-app-procedure.out">;
o = shout("hey");
