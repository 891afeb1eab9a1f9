// expect: Cannot assign to loop variable i
foreach i in [0:3] { i = 2; }
