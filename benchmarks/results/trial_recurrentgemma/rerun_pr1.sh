#!/bin/bash
# Re-runs pr1's review alone (nothing else of this trial running beside it), for a timing.
cd /tmp/fh-rg/recurrentgemma && source /tmp/fh-rg/venv/bin/activate && git checkout -q pr1-nan-guard
echo "== pr1 rerun load before: $(uptime)"
start=$(date +%s.%N)
pt2bot review --base main --out /tmp/fh-rg/review_pr1_rerun > /tmp/fh-rg/ev/review_pr1_rerun.txt 2>&1
rc=$?
echo "== pr1 rerun rc=$rc wall=$(echo "$(date +%s.%N) - $start" | bc) s; load after: $(uptime)"
git checkout -q main
