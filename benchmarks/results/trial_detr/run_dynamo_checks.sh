#!/bin/sh
# one process at a time; eager backend; one thread; TORCH_LOGS=graph_breaks,recompiles
cd /tmp/fh-detr/T
export OMP_NUM_THREADS=1 TORCH_LOGS=graph_breaks,recompiles
for m in detr_r18_sine detr_r18_learned_aux_nested detr_r50_dc5 detr_segm_r50 transformer; do
  for mk in 1 0; do
    python -W ignore dynamo_check.py /tmp/fh-detr/src_main $m $mk > dynamo_check_${m}_mark$mk.log 2>&1
  done
done
for pr in pr2 pr3 pr4; do
  for m in detr_r18_sine detr_r18_learned_aux_nested; do
    python -W ignore dynamo_check.py /tmp/fh-detr/src_$pr $m 1 > dynamo_check_${pr}_${m}_mark1.log 2>&1
  done
done
python -W ignore dynamo_check.py /tmp/fh-detr/src_pr2 detr_segm_r50 1 > dynamo_check_pr2_detr_segm_r50_mark1.log 2>&1
