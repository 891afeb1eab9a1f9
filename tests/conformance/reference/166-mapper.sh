#!/bin/bash
for i in 0 1; do for j in 0 1; do echo "[$i][$j].a 166-$i${j}a"; echo "[$i][$j].b 166-$i${j}b"; done; done
