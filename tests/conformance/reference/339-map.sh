#!/bin/bash
while [ $# -gt 0 ]; do case $1 in -prefix) prefix=$2;; -n) n=$2;; esac; shift 2; done
for i in $(seq 0 $((n-1))); do echo "[$i] ${prefix}$i.dat"; done
