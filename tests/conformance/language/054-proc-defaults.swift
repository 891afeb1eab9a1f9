(string r) greeting(string left = "hi", string right = "you") { r = left + " " + right; }
trace(greeting());
trace(greeting(right = "there"));
trace(greeting(left = "yo", right = "me"));
