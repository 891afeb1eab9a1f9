// An array of mapped files passed to an app: @filenames gives one argv word per
// element, in key order (filesys_mapper sorts its matches); only the pattern's matches.
type file;
app (file o) catall(file parts[]) { cat @filenames(parts) stdout=@o; }
file parts[] <filesys_mapper; location="data/015-parts", pattern="*.txt">;
file joined <"015-file-array-to-app.out">;
joined = catall(parts);
trace(length(parts), @filenames(parts));
