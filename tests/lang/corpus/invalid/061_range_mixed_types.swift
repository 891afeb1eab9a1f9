// expect: To and from range values must have the same type
foreach f in [0:1.5:0.5] { trace(f); }
