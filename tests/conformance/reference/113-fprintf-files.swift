fprintf("113-one.txt", "hello\n");
fprintf("113-two.txt", "%s\n%s\n%s\n", "hi", "ok", "bye");
fprintf("113-three.txt", "hello: %i\n", 32);
