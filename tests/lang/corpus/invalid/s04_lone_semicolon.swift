// expect: unexpected ';'; expected a statement
;
