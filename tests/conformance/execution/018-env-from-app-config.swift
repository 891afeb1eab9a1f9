// An app's env.* settings in swift.conf (reference 4.3, Guide 11.4) reach its process.
type file;
app (file o) show() { sh "-c" "echo $GREETING" stdout=@o; }
file o <"018-env-from-app-config.out">;
o = show();
