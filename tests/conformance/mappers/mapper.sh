#!/bin/bash
echo "[2] qux"
echo "[0] foo"
echo "[1] bar"
