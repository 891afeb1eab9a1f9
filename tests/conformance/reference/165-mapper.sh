#!/bin/bash
echo "[0].l 165-0l.out"
echo "[0].r 165-0r.out"
echo "[1].l 165-1l.out"
echo "[1].r 165-1r.out"
