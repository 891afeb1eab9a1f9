// warns: Variable found, defined on line 3, might have multiple conflicting writers
int xs[] = [3, 5, 7];
int found;
foreach x, i in xs {
    if (x == 5) {
        found = i;
    }
}
trace(found);
