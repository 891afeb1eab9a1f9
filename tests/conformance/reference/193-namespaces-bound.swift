namespace "http://foo/";
namespace ns "http://bar/";
namespace qux "http://third/";
int p[] = [1 : 9 : 2];  // numbers 1 3 5 7 9
trace(p);
