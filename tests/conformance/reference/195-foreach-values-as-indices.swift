type messagefile;
int arr[];
app (messagefile t) greeting() {
    echo "Hello, world!" stdout=@filename(t);
}
foreach a, i in [0:2] {
  arr[i] = i;
}
string s[] = [ "195-0out.txt", "195-1out.txt", "195-2out.txt" ];
messagefile f[] <array_mapper; files=s>;
trace("arr", arr);
foreach a, i in arr {
  f[a] = greeting();
  trace(@filename(f[a]));
}
