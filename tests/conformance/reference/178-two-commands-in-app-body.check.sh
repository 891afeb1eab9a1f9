# both commands ran: each made its output
[ -f 178-a.txt ] && [ -f 178-b.txt ]
