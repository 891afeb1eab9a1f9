namespace "http://ci.uchicago.edu/swift/2006";
trace("ns ok");
