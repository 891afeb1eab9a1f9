// expect: Operator '%/' can only be applied to 'int' and 'int'
float x = 1.5 %/ 2;
