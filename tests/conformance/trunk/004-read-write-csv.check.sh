diff rows.csv 004-read-write-csv.rows.expected && [ "$(head -1 one.csv)" = "$(printf 'name\tn\tx\tok')" ]
