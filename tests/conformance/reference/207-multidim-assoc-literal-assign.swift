string greetings[int][int];
greetings = [ [ "left", "right" ], ["up", "down"]];
trace(greetings[1][0]);
