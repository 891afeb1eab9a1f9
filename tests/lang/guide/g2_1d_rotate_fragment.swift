// User Guide 2.1: the rotate app as first shown (completed with the declarations it
// uses: the type image and the angle parameter the full example adds)
type image;
image photo <"shane.jpg">;
image rotated;
app (image output) rotate(image input, int angle) { convert "-rotate" angle @input @output; }
rotated = rotate(photo, 180);
