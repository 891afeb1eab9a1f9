// The log's first Loader line names the Swift version, as 0.96 wrote it
// ("INFO  Loader VERSION Swift 0.96.2 git-rev: ..."): log tools and people reading a
// log look for "VERSION Swift".  swiftnb writes "VERSION swiftnb 0.1.0".
trace("version");
