type point { float x; float y; }
point pts[];
pts[0].x = 1.0;
pts[0].y = 2.0;
pts[1].x = 3;
trace(pts[0].x + pts[1].x);
