#!/bin/bash
# How /tmp/fh-rg/gt/trees/ was made: each branch exported with git archive, and each candidate
# of pt2bot (report.json fixes.candidates[...].lines over start_line..end_line) applied to a copy of head.
set -e
cd /tmp/fh-rg/recurrentgemma
for b in main pr1-nan-guard pr2-rglru-reset pr3-softcap pr4-typecheck; do
  mkdir -p /tmp/fh-rg/gt/trees/$b && git archive $b | tar -x -C /tmp/fh-rg/gt/trees/$b
done
apply() {  # apply(head_tree, out_tree, review_dir, which): which = first | verified
  rm -rf /tmp/fh-rg/gt/trees/$2 && cp -r /tmp/fh-rg/gt/trees/$1 /tmp/fh-rg/gt/trees/$2
  python3 - "$2" "$3" "$4" <<'PY'
import json, sys
out, rev, which = sys.argv[1:]
cs = json.load(open(f"/tmp/fh-rg/{rev}/report.json"))["fixes"]["candidates"]
c = cs[0] if which == "first" else [c for c in cs if c["verified"]][0]
p = f"/tmp/fh-rg/gt/trees/{out}/{c['path']}"
L = open(p).read().split("\n"); L[c["start_line"]-1:c["end_line"]] = c["lines"]; open(p, "w").write("\n".join(L))
PY
}
apply pr1-nan-guard pr1-candidate review_pr1 first      # the unverified _assert_async candidate
apply pr2-rglru-reset pr2-fix review_pr2 verified       # the posted torch.where suggestion
apply pr3-softcap pr3-fix review_pr3 verified           # the posted torch.cond suggestion
