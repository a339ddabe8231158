#!/bin/bash
# runs each PR review in turn: time and load before/after
cd /tmp/fh-esm/esm
for b in "$@"; do
  git checkout -q $b || exit 1
  echo "== $b start $(date -u +%T) load: $(uptime | sed 's/.*load average: //')" >> ../reviews.log
  /usr/bin/time -f "%e s wall, %U s user, %S s sys" ../venv/bin/pt2bot review --base main --out ../rev_$b > ../rev_$b.log 2>&1
  echo "== $b exit $? end $(date -u +%T) load: $(uptime | sed 's/.*load average: //') $(tail -1 ../rev_$b.log)" >> ../reviews.log
done
git checkout -q main
