type file;
file outfile <"187-intdivision-strcat.out">;
app (file o) echo (string s) {
   echo s stdout=@o;
}
int x = 7 %/ 5;
float y = 1.0 * @toFloat(x);
string z = @strcat(y);
string msg = @strcat("x = ", x, ", y = ", y, ", z = ", z);
outfile = echo(msg);
