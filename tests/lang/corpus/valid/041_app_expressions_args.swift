type file;
app (file o) echoer(int x, int arr[], string s) {
    echo "a" (1+2) x+1 arr arr[1] s stdout=@o;
}
int a[] = [1, 2, 3];
file o <"o.txt"> = echoer(5, a, "s p");
