// expect: And operation can only be applied to parameters of type boolean.
boolean b = 1 && true;
