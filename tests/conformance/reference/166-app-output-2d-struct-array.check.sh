set -e
for f in 166-00a 166-00b 166-01a 166-01b 166-10a 166-10b; do test -f $f; done
