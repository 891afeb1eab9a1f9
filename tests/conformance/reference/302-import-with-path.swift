import "302-lib/defs";
file f <"302-lib/defs.swift">;
trace(triple(3), @f);
