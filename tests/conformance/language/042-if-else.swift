int x = 5;
if (x > 3) { trace("big"); } else { trace("small"); }
if (x > 10) { trace("huge"); }
