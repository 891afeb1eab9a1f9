// expect: You cannot assign value of type boolean to a variable of type float
float f = true;
