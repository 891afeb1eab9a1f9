trace(strstr("hello", "ll"), strstr("hello", "z"), strstr("hello", ""));
