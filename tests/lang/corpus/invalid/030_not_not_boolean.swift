// expect: Not operation can only be applied to parameter of type boolean.
boolean b = !3;
