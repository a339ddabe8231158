#!/bin/bash
# Reviews each PR branch of /tmp/fh-rg/recurrentgemma against main, one after the other.
cd /tmp/fh-rg/recurrentgemma
source /tmp/fh-rg/venv/bin/activate
for n in "$@"; do
  br=$(git branch --format='%(refname:short)' | grep "^pr$n-")
  git checkout -q "$br"
  echo "== pr$n ($br) load before: $(uptime)"
  start=$(date +%s.%N)
  pt2bot review --base main --out /tmp/fh-rg/review_pr$n > /tmp/fh-rg/ev/review_pr$n.txt 2>&1
  rc=$?
  end=$(date +%s.%N)
  echo "== pr$n rc=$rc wall=$(echo "$end - $start" | bc) s; load after: $(uptime)"
done
git checkout -q main
