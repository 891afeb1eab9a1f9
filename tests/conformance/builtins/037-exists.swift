trace(exists("present.txt"), exists("absent.txt"));
