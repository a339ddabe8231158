#!/bin/bash
# each PR reviewed from its branch's checkout, as a user would: pt2bot review --base main --out DIR
cd /tmp/fh-s4/s4
source ../venv/bin/activate
for b in "$@"; do
  git checkout -q $b
  uptime > ../out/load_$b.txt
  s=$(date +%s.%N)
  pt2bot review --base main --out ../out/review_$b > ../out/terminal_review_$b.txt 2>&1
  rc=$?
  e=$(date +%s.%N)
  echo "exit $rc; $(echo "$e-$s"|bc) s wall" >> ../out/terminal_review_$b.txt
  uptime >> ../out/load_$b.txt
done
git checkout -q main
