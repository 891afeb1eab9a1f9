set -e
for i in 0 1 2; do grep -q Hello 195-${i}out.txt; done
