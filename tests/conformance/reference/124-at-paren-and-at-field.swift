type file;
type pair { file left; file right; }
pair p <simple_mapper; prefix="124-p.", suffix=".txt">;
file f <"124-f.txt">;
trace(@(f), @p.left, @filename(p.right));
