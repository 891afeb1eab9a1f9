set -e
[ -f '108-x" space .out' ]
[ -f "108-y' sp'ace .out" ]
