trace([true, false], [1.0, 2.5]);
