int i;
i = @toint("3");
trace(i);
