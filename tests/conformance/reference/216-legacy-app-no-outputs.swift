f (int g) { app { echo g; } }
f(3);
trace("called");
