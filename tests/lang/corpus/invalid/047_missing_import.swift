// expect: When processing import nosuchmodule: nosuchmodule.swift (No such file or directory)
import "nosuchmodule";
trace(1);
