// expect: You can only append to an array with 'auto' index type. Current index type: int
int a[];
a << 1;
