namespace "http://ci.uchicago.edu/swift/2009/02/swiftscript";
namespace swift "http://ci.uchicago.edu/swift";
trace("ns");
