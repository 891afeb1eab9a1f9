trace("abc" == "abc", "abc" != "abd", "B" < "a");
