// expect: Condition in iterate statement has to be of boolean type.
iterate i { trace(i); } until (i + 1);
