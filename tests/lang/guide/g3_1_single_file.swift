// User Guide 3.1
type file;
file f <single_file_mapper;file="plot_outfile_param">;
file g <"plot_outfile_param">;
