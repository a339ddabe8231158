set -x
cd /tmp/fh-flux/flux
unset PYTHONPATH
PY=/tmp/fh-flux/venv/bin/python
git checkout -q pr2-timestep-item
uptime; date -u +%T
/usr/bin/time -f "%e s" $PY -m pt2bot review --base main --out /tmp/fh-flux/rerun71/rev2 > /tmp/fh-flux/rerun71/pr2_review.out 2>&1; echo rc=$?
$PY -m pt2bot review --base main --no-smoke --out /tmp/fh-flux/rerun71/rev2_nosmoke > /tmp/fh-flux/rerun71/pr2_nosmoke.out 2>&1; echo rc=$?
git checkout -q main
uptime; date -u +%T
/usr/bin/time -f "%e s" $PY -m pt2bot run --config /tmp/fh-flux/pt2bot.advice_pasted.yml --model ae --out /tmp/fh-flux/rerun71/run_adv/results.json > /tmp/fh-flux/rerun71/run_adv.out 2>&1; echo rc=$?
uptime; date -u +%T
