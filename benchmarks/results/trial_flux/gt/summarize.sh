#!/bin/sh
# one-line-per-event summary of a gt_dynamo log: graph break sites, recompile reasons, counters
grep -h -E "Graph break in user code at|Graph Break Reason|Recompiling function|triggered by the following guard failure|^ *- [0-9]+/[0-9]+:|COUNTERS|^CASE" "$@" | sed -E 's/^[VWI][0-9]+ [0-9:.]+ [0-9]+ [^]]+\] (\[[^]]*\] )?//' | sort | uniq -c
