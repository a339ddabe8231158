#!/bin/sh
# usage: run_dynamo_checks.sh TAG [MODEL...]  (from the MAE checkout; logs into $OUT)
tag=$1; shift
for m in "$@"; do for mark in 0 1; do
  TORCH_LOGS=graph_breaks,recompiles OMP_NUM_THREADS=1 python -W ignore $OUT/dynamo_check.py $m $mark > $OUT/dynamo_check_${tag}${m}_mark${mark}.log 2>&1
done; done
