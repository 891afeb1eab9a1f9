printf("%s-%i\n", "a", 1);
printf("plain\n");
