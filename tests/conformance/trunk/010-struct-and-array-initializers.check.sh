[ "$(head -1 rows.csv)" = "name,n,w,on" ] && grep -q '^"beta",2,0.5,false$' rows.csv
