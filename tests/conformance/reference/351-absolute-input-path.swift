type file;
app (file o) head1 (file i) {
  head "-n" 1 @i stdout=@o;
}
file i <"/etc/passwd">;
file o <"351-absolute-input-path.out">;
o = head1(i);
