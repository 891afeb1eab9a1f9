#!/bin/bash
echo "eerste 161-a.out"
echo "derde.links 161-cl.out"
echo "derde.rechts 161-cr.out"
