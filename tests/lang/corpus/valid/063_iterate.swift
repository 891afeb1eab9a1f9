iterate i {
    trace(i);
} until (i == 3);
