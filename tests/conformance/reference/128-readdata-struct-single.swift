type config { string name; float scale; boolean on; }
config c = readData("128-config.txt");
trace(c.name, c.scale, c.on);
