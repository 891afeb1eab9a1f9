type file;
file stus[] <ext; exec="mapper.sh">;
trace(filenames(stus));
