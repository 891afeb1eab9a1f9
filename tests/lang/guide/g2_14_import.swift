// User Guide 2.14: import "defs"; file f;  (defs.swift declares type file)
import "defs"; file f;
