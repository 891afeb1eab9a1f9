type file;
type struct { file eerste; file tweede; }
struct s <ext; exec="mapper.sh", foo=3, bar="x">;
file arr[] <Ext; exec="list.sh">;
trace(@s.eerste);
