#!/bin/bash
echo "eerste e.txt"
echo "derde.links l.txt"
echo "derde.rechts r.txt"
