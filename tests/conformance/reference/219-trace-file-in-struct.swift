type file;
type pair { file left; file right; }
pair p <simple_mapper; prefix="219-", suffix=".txt">;
trace(p.left);
