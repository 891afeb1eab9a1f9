import "057-defs";
import "057-defs";
file f <"057-x.txt">;
trace(double(21), @filename(f));
