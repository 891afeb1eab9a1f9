type file;
app (file edited) setTemps (file inParams) {
  cat stdin=@inParams stdout=@edited;
}
file inParams <single_file_mapper; file="209-params.in">;
string config[] = readData(setTemps(inParams));
trace(0, config[0]);
trace(1, config[1]);
