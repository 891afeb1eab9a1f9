// User Guide 2.11.2
boolean predicate = 1 < 2;
if(predicate) { trace("yes"); } else { trace("no"); }
