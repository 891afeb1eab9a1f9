// stdlib.v2's PI and E, and trunk's indexOf/lastIndexOf with an end bound.
import "stdlib.v2";

trace(PI, E, sin(PI / 2), ln(E));
string s = "one two three two";
trace(indexOf(s, "two", 6, 16), indexOf(s, "two", 6, 10), lastIndexOf(s, "two", -1),
      lastIndexOf(s, "two", 13, 0), lastIndexOf(s, "two", -1, 14));
trace(parseInt("ff", base = 16), toInt(1.9), toString(2.5), join(split("a  b c", " "), "+"));
