#!/bin/bash
# usage: run_dynamo_checks.sh PREFIX MODEL...   (in the jepa checkout whose state is checked)
source /tmp/fh-jepa/venv/bin/activate
p=$1; shift
for m in "$@"; do for k in ${MARKS:-0 1 2}; do
  TORCH_LOGS=graph_breaks,recompiles timeout 600 python /tmp/fh-jepa/out/dynamo_check.py $m $k $([ $k = 1 ] && echo export) > /tmp/fh-jepa/out/dynamo_check_${p}${m}_mark$k.log 2>&1
done; done
