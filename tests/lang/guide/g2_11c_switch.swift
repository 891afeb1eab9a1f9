// User Guide 2.11.3
int controlExpression = 2;
switch(controlExpression) { case 1: trace(1); case 2: trace(2); default: trace("d"); }
