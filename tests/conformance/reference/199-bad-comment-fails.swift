// THIS-SCRIPT-SHOULD-FAIL
/namedOutputs = wavelet(script, 101, "FB");
