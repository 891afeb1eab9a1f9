iterate i {
    trace(i);
    int j = i;
} until (j == 3);
