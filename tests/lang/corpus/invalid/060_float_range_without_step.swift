// expect: Step in range specification can be omitted only when from and to types are int
foreach f in [0.0:1.0] { trace(f); }
