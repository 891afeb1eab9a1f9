// expect: unexpected '}': there is no open block to close here
int a = 1;
}
