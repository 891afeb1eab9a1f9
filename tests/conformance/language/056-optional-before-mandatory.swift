(string r) greeting(string left = "hi", string right) { r = left + " " + right; }
trace(greeting(right = "there"));
