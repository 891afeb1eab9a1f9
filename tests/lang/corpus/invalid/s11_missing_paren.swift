// expect: unexpected end of file; expected an expression or ')'
trace(
