#!/bin/bash
# dynamo_check.py on main and each PR's head (a git worktree each), eager backend, one thread.
export XFORMERS_DISABLED=1 TORCH_LOGS=graph_breaks,recompiles OMP_NUM_THREADS=1
PY=/tmp/fh-dinov2/venv/bin/python; O=/tmp/fh-dinov2/out
cd /tmp/fh-dinov2/main_wt && for mk in 0 1; do $PY $O/dynamo_check.py vit_p14_masks $mk > $O/dynamo_check_vit_p14_masks_mark$mk.log 2>&1; done
for pr in pr2 pr3; do cd /tmp/fh-dinov2/${pr}_wt && $PY $O/dynamo_check.py vit_p14_masks 1 > $O/dynamo_check_${pr}_vit_p14_masks_mark1.log 2>&1; done
cd /tmp/fh-dinov2/pr3_wt && $PY $O/dynamo_check.py vit_p14_reg4 1 > $O/dynamo_check_pr3_vit_p14_reg4_mark1.log 2>&1
