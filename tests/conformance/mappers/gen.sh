#!/bin/bash
while [ $# -gt 0 ]; do case $1 in -prefix) prefix=$2;; -n) n=$2;; *) echo "bad arg $1" >&2; exit 1;; esac; shift 2; done
for i in $(seq 0 $n); do echo "[$i] ${prefix}${i}.out"; done
