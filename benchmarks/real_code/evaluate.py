"""Match pt2bot's findings against dynamo's truth on the same library files; label; figures.

Inputs (under results/): `check/<lib>.json` (pt2bot findings JSON, paths relative to the
package directory) and `truth/<lib>__<model>.json` (collect.py). The library sources are
read from the package directory recorded in the check file, for statement spans and the
conditions a finding sits under (the AST; no import).

Automatic label of each finding (`auto`):
- `confirmed`: dynamo reported what the rule predicts at a line of the finding's statement,
  in any library frame of the event's stack (a break for break rules; a specialisation of
  a varying dim for PTC202/302/303; a guard on a varying dim, a specialisation or a
  recompile reason for PTC301);
- `executed-unconfirmed`: dynamo traced the line (symbolically executed it) on a default
  forward and did not do that there: a false claim for a finding stated without a condition;
- `executed-conditional`: dynamo traced the statement, but the finding sits behind a
  short-circuit operand or in a ternary branch of it, so it may not have been evaluated;
- `executed-untraced`: the eager forward ran the line but dynamo never traced it (its frame
  was skipped after a break in a loop, or it runs under `torch.compiler.disable`): unknown;
- `not-executed`: no model ran the line (conditional, or unreached by our models): unknown;
- `not-checkable`: the rule's claim is not something a compile of these models shows
  (PTC103 export, PTC305/PTC401/PTC402 compile calls, PTC203's failure under
  capture_scalar_outputs/fullgraph/export: it claims no default-path break; a PTC110 store
  the models ran without a recompile on its attribute, below): judged by hand only.

PTC110 (module state mutated in compiled code) claims a guard on the attribute and a recompile
when the stored object changes: `confirmed` where a collected `recompile_reason` guards on that
attribute (the guard expression names it), `not-checkable` where the line ran without one (two
calls per model need not store a different object: a dtype conversion changes nothing on a
CPU model of one dtype), else `not-executed`. A rule this file does not know is `not-checkable`
(with a warning), never judged false by the default-path truth.

Hand labels (labels.json) give `verdict` true/false with a pattern and a one-line reason
for every `executed-unconfirmed` finding and a sample of the others; where a hand verdict
differs from the automatic one, the hand verdict counts and the disagreement is listed.
A label with `message_contains` judges only findings whose message contains that text: the
verdict is about what the finding claims, and a revision that words the claim differently
(PTC110's "changes on every call" vs "once per new key") gets its own label.

Sites (recall). A specialisation can follow from a cause elsewhere; it counts as flagged when
the finding that removes its cause flags the cause:
- a site label's `caused_by` ({path, line, kind, gb?}: a site of the same library) names the
  site it follows from, judged by hand with dynamo (e.g. a specialisation in a frame resumed
  after a break, measured absent without the break); it is flagged when that site is;
- a specialisation whose specialised source is a dim of the tensor a `.tolist()` on its line
  reads (`L['num_tokens'].size()[0]` at `...split(num_tokens.tolist())`) is flagged by a
  PTC102 finding there: dynamo specialises the length of the list it makes, and the fix of
  the finding (no `.tolist()`) removes it.
Recall is given for graph-break sites (the issue's target) and for specialisation/guard sites
apart, and combined.
"""
from __future__ import annotations

import ast
import glob
import json
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

FAMILIES = ("PTC1xx", "PTC2xx", "PTC3xx", "PTC4xx")

# What each rule predicts, in terms of what dynamo shows. GB sets: the id(s) dynamo uses.
BREAK_GB: dict[str, set[str]] = {
    # `.tolist()` and `int(t)` of some tensors break as GB0033 "Data dependent operator".
    "PTC101": {"GB0124"}, "PTC102": {"GB0109", "GB0033"}, "PTC104": {"GB0124", "GB0170", "GB0033"},
    "PTC105": {"GB0059"}, "PTC106": {"GB0291"}, "PTC107": {"GB0007"}, "PTC108": {"GB0059"}, "PTC111": {"GB0007"},
    "PTC109": {"GB0025"}, "PTC113": {"GB0225"}, "PTC114": {"GB0088"}, "PTC115": {"GB7489"}, "PTC116": {"GB4198"}, "PTC117": {"GB0208", "GB0142"},
    "PTC201": {"GB0170"},
    "PTC304": {"GB0036"},
    "PTC403": {"GB0098"},
}
# PTC306 (an einx operation) claims a specialisation of its operands' varying dims.
SPECIALIZE_RULES = {"PTC202", "PTC302", "PTC303", "PTC306", "PTC307"}
GUARD_RULES = {"PTC301"}
# PTC203 claims a failure only under capture_scalar_outputs / fullgraph / export (with the
# default settings the .item() read broke the graph first): the default-path truth cannot show it.
UNCHECKABLE_RULES = {"PTC103", "PTC203", "PTC305", "PTC401", "PTC402", "PTC000"}
# Judged by a recompile whose guard names the attribute the finding stores (see the docstring).
RECOMPILE_RULES = {"PTC110"}
KNOWN_RULES = set(BREAK_GB) | SPECIALIZE_RULES | GUARD_RULES | UNCHECKABLE_RULES | RECOMPILE_RULES
_ATTR_IN_MESSAGE = re.compile(r"`self\.([A-Za-z_][\w.]*)`")
_warned: set[str] = set()
# A dynamo site's family: which rules could flag it.
GB_FAMILY = {"GB0124": "PTC1xx", "GB0109": "PTC1xx", "GB0033": "PTC1xx", "GB0059": "PTC1xx",
             "GB0291": "PTC1xx",
             "GB0007": "PTC1xx", "GB0025": "PTC1xx", "GB0170": "PTC2xx", "GB0036": "PTC3xx",
             "GB0098": "PTC4xx"}
_HOST_SKIP = re.compile(r"\b(random|time|numpy\.random|np\.random|torch/jit)\b")   # PTC107, PTC111


def family(rule: str) -> str:
    return f"PTC{rule[3]}xx" if rule.startswith("PTC") and len(rule) >= 4 else "other"


# ------------------------------------------------------------------ source facts (AST)
@dataclass
class FileFacts:
    """Statement spans, branch tests and enclosing conditions of one library file."""
    lines: list[str]
    tree: ast.AST | None
    parents: dict[int, ast.AST] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str) -> "FileFacts":
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            tree: ast.AST | None = ast.parse(text)
        except (OSError, SyntaxError):
            return cls([], None)
        ff = cls(text.splitlines(), tree)
        for node in ast.walk(tree):
            for ch in ast.iter_child_nodes(node):
                ff.parents[id(ch)] = node
        return ff

    def src(self, node: ast.AST) -> str:
        seg = ast.get_source_segment("\n".join(self.lines), node) or ""
        return " ".join(seg.split())[:200]

    def innermost(self, line: int, col: int | None = None) -> list[ast.AST]:
        """Nodes whose span contains (line, col), outermost first."""
        if self.tree is None:
            return []
        chain: list[ast.AST] = []
        node: ast.AST = self.tree
        while True:
            nxt = None
            for ch in ast.iter_child_nodes(node):
                lo, hi = getattr(ch, "lineno", None), getattr(ch, "end_lineno", None)
                if lo is None or hi is None or not lo <= line <= hi:
                    continue
                if col is not None and lo == line and getattr(ch, "col_offset", 0) > col:
                    continue
                if col is not None and hi == line and getattr(ch, "end_col_offset", 1 << 30) <= col:
                    continue
                nxt = ch
                break
            if nxt is None:
                return chain
            chain.append(nxt)
            node = nxt

    def span(self, line: int, end_line: int | None, col: int | None) -> set[int]:
        """The finding's lines plus the head of the innermost statement holding it."""
        out = set(range(line, (end_line or line) + 1))
        stmts = [n for n in self.innermost(line, col) if isinstance(n, ast.stmt)]
        if stmts:
            s = stmts[-1]
            body = getattr(s, "body", None)
            if isinstance(body, list) and body and hasattr(body[0], "lineno") and \
                    not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                hi = max(s.lineno, body[0].lineno - 1)
                if line <= hi:
                    out |= set(range(s.lineno, hi + 1))
            elif not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out |= set(range(s.lineno, (s.end_lineno or s.lineno) + 1))
        return out

    def is_branch_test(self, line: int) -> bool:
        """Is `line` part of the test of an if/while/ternary/assert or a short-circuit?"""
        for n in self.innermost(line):
            test = getattr(n, "test", None)
            # not `assert`: a size bound asserted is the intended range, not a branch
            if isinstance(n, (ast.If, ast.While, ast.IfExp)) and test is not None:
                if test.lineno <= line <= (test.end_lineno or test.lineno):
                    return True
            if isinstance(n, ast.BoolOp):
                return True
        return False

    def conditions(self, line: int, col: int | None) -> list[tuple[str, str]]:
        """(kind, guard) the finding sits under inside its function, innermost first.

        kind: `if`, `else`, `inline` (a ternary branch or a later short-circuit operand:
        the same statement may run without evaluating the finding), `except`, `raise`,
        `early-return` (after `if c: return` in the same block).
        """
        chain = self.innermost(line, col)
        conds: list[str] = []
        for depth in range(len(chain) - 1, -1, -1):
            node = chain[depth]
            child = chain[depth + 1] if depth + 1 < len(chain) else None
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                # `if ignore is None: return x` at the top of the function body is an early
                # exit too: the function's own block is the last one looked at
                if child is not None and isinstance(node.body, list) and child in node.body:
                    conds.extend(self._early_returns(node.body, child))
                break
            if child is None:
                continue
            inline = isinstance(node, ast.IfExp)
            if isinstance(node, (ast.If, ast.IfExp)):
                if _in(child, node.body):
                    conds.append(("inline" if inline else "if", self.src(node.test)))
                elif _in(child, node.orelse):
                    conds.append(("inline" if inline else "else", f"not ({self.src(node.test)})"))
            elif isinstance(node, ast.BoolOp):
                idx = next((i for i, v in enumerate(node.values) if v is child), 0)
                if idx > 0:
                    prev = " and ".join(self.src(v) for v in node.values[:idx])
                    conds.append(("inline", prev if isinstance(node.op, ast.And)
                                  else f"not ({prev})"))
            elif isinstance(node, ast.ExceptHandler):
                conds.append(("except",
                              f"except {self.src(node.type) if node.type else ''}".strip()))
            elif isinstance(node, ast.Raise):
                conds.append(("raise", "raise"))
            # early exits before the finding in the same block: `if c: return ...`
            for fld in ("body", "orelse", "finalbody"):
                block = getattr(node, fld, None)
                if isinstance(block, list) and child in block:
                    conds.extend(self._early_returns(block, child))
        return conds

    def _early_returns(self, block: list[ast.stmt], child: ast.AST) -> list[tuple[str, str]]:
        out = []
        for prev_stmt in block[:block.index(child)]:
            if isinstance(prev_stmt, ast.If) and not prev_stmt.orelse and \
                    prev_stmt.body and isinstance(prev_stmt.body[-1], ast.Return):
                out.append(("early-return", f"not ({self.src(prev_stmt.test)})"))
        return out


def _in(child: Any, block: Any) -> bool:
    if isinstance(block, list):
        return child in block
    return child is block


# ------------------------------------------------------------------ loading
def load_library(results: str, lib: str, check_dir: str = "check"
                 ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with open(os.path.join(results, check_dir, f"{lib}.json"), encoding="utf-8") as fh:
        check = json.load(fh)
    truths = []
    for p in sorted(glob.glob(os.path.join(results, "truth", f"{lib}__*.json"))):
        with open(p, encoding="utf-8") as fh:
            truths.append(json.load(fh))
    return check, truths


def _covers(stack: list[dict[str, Any]], path: str, span: set[int]) -> bool:
    return any(f["path"] == path and f["line"] in span for f in stack)


_SOURCE_BASE = re.compile(r"^L\['([A-Za-z_]\w*)'\]\.size\(\)\[\d+\]$")


def _tolist_receivers(ff: "FileFacts", line: int) -> set[str]:
    """Names whose `.tolist()` is called in the statement at `line` (`num_tokens.tolist()`)."""
    out: set[str] = set()
    stmts = [n for n in ff.innermost(line) if isinstance(n, ast.stmt)]
    if not stmts:
        return out
    for n in ast.walk(stmts[-1]):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "tolist" \
                and isinstance(n.func.value, ast.Name):
            out.add(n.func.value.id)
    return out


def truth_sites(truths: list[dict[str, Any]], facts: "Facts") -> list[dict[str, Any]]:
    """Default-path sites per library: breaks, specialisations, shape-branch guards."""
    sites: dict[tuple[Any, ...], dict[str, Any]] = {}

    def add(key: tuple[Any, ...], rec: dict[str, Any], model: str) -> None:
        s = sites.get(key)
        if s is None:
            s = sites[key] = {**rec, "models": []}
        if model not in s["models"]:
            s["models"].append(model)

    for t in truths:
        m = t["model"]
        for b in t.get("breaks") or ():
            gb = b.get("gb") or "unknown"
            fam = GB_FAMILY.get(gb)
            if gb == "GB0007" and not _HOST_SKIP.search(b.get("reason") or ""):
                fam = None      # a skipped function other than random/time: no rule's kind
            add(("break", gb, b["path"], b["line"]),
                {"kind": "break", "gb": gb, "gb_type": b.get("gb_type"), "path": b["path"],
                 "line": b["line"], "stack": b.get("stack") or [], "family": fam,
                 "in_loop": b.get("in_loop"), "reason": (b.get("reason") or "")[:300]}, m)
        for s in t.get("specializations") or ():
            if not s.get("user_dim"):
                continue    # a size fixed per call site (see collect.py: user dims)
            add(("specialize", s["path"], s["line"]),
                {"kind": "specialize", "gb": None, "path": s["path"], "line": s["line"],
                 "stack": s.get("stack") or [], "family": "PTC3xx",
                 "reason": f"{','.join(s.get('sources') or [])} specialised to {s.get('value')}"},
                m)
            key = ("specialize", s["path"], s["line"])
            for src in s.get("sources") or ():
                mb = _SOURCE_BASE.match(src)
                if mb and mb.group(1) in _tolist_receivers(facts.get(s["path"]), s["line"]):
                    sites[key]["tolist_of"] = mb.group(1)
        for g in t.get("guards") or ():
            if g["expr"].startswith("Eq(") or not g.get("user_dim") or \
                    any("._base" in src for src in g.get("sources") or ()) or \
                    not facts.get(g["path"]).is_branch_test(g["line"]):
                continue    # equalities are specialisations; a view's storage bound or a
                            # guard outside a branch test comes from an op, not a branch
            add(("guard", g["path"], g["line"]),
                {"kind": "guard", "gb": None, "path": g["path"], "line": g["line"],
                 "stack": g.get("stack") or [], "family": "PTC3xx",
                 "reason": f"guard {g['expr']} on {','.join(g.get('sources') or [])}"}, m)
    out = list(sites.values())
    for s in out:
        s["source"] = facts.line(s["path"], s["line"])
    return sorted(out, key=lambda s: (s["path"], s["line"], s["kind"]))


class Facts:
    def __init__(self, pkg_dir: str) -> None:
        self.pkg_dir = pkg_dir
        self._files: dict[str, FileFacts] = {}

    def get(self, rel: str) -> FileFacts:
        ff = self._files.get(rel)
        if ff is None:
            ff = self._files[rel] = FileFacts.load(os.path.join(self.pkg_dir, rel))
        return ff

    def line(self, rel: str, line: int) -> str:
        lines = self.get(rel).lines
        return lines[line - 1].strip()[:200] if 0 < line <= len(lines) else ""


# ------------------------------------------------------------------ matching
def site_findings(s: dict[str, Any], findings: list[dict[str, Any]], facts: "Facts"
                  ) -> list[tuple[dict[str, Any], bool]]:
    """The findings at a frame of site `s`'s stack (a line of the finding's statement), each
    with whether its rule's kind is the site's (the finding flags the site: its fix removes it)."""
    paths = {fr["path"] for fr in s["stack"]}
    out = []
    for f in findings:
        if f["path"] not in paths:
            continue
        span = facts.get(f["path"]).span(f["line"], f.get("end_line"), f.get("col"))
        if _covers(s["stack"], f["path"], span):
            out.append((f, span))
    # the length of the list a flagged `.tolist()` makes (see the docstring)
    tolist_flag = any(f["rule"] == "PTC102" and s.get("tolist_of") and f["path"] == s["path"]
                      and s["line"] in span for f, span in out)

    def flags(r: str) -> bool:
        return (family(r) == s["family"] or (s["kind"] == "specialize" and r in SPECIALIZE_RULES)
                or (s["kind"] == "guard" and r in GUARD_RULES)
                or (s["kind"] == "break" and s["gb"] in BREAK_GB.get(r, ()))
                or (r == "PTC102" and tolist_flag))
    return [(f, flags(f["rule"])) for f, _span in out]


def match_finding(f: dict[str, Any], span: set[int], truths: list[dict[str, Any]]
                  ) -> tuple[str, list[str], list[str]]:
    """(auto label, models that confirm it, evidence strings)."""
    rule, path = f["rule"], f["path"]
    if rule not in KNOWN_RULES and rule not in _warned:
        _warned.add(rule)
        print(f"evaluate: rule {rule} has no truth mapping here: not-checkable (add it to evaluate.py)")
    if rule in UNCHECKABLE_RULES or rule not in KNOWN_RULES:
        return "not-checkable", [], []
    if rule in RECOMPILE_RULES:
        return _match_recompile(f, span, truths)
    confirm: list[str] = []
    evidence: list[str] = []
    for t in truths:
        m = t["model"]
        if rule in BREAK_GB:
            for b in t.get("breaks") or ():
                if _covers(b.get("stack") or [], path, span):
                    confirm.append(m)
                    evidence.append(f"{b.get('gb')} {b.get('gb_type')}")
        elif rule in SPECIALIZE_RULES or rule in GUARD_RULES:
            for s in t.get("specializations") or ():
                if s.get("user_dim") and _covers(s.get("stack") or [], path, span):
                    confirm.append(m)
                    evidence.append(f"specialised {','.join(s.get('sources') or [])}={s['value']}")
            for g in t.get("guards") or ():
                if g.get("user_dim") and (rule in GUARD_RULES or g["expr"].startswith("Eq(")) \
                        and not any("._base" in src for src in g.get("sources") or ()) \
                        and _covers(g.get("stack") or [], path, span):
                    confirm.append(m)
                    evidence.append(f"guard {g['expr'][:80]}")
            if rule in GUARD_RULES:
                for r in t.get("recompiles") or ():
                    if r.get("path") == path and r.get("line") in span:
                        confirm.append(m)
                        evidence.append(f"recompile {r['reason'][:80]}")
    if confirm:
        return "confirmed", sorted(set(confirm)), sorted(set(evidence))[:5]
    traced = [t["model"] for t in truths if span & set((t.get("traced") or {}).get(path, ()))]
    if traced:
        return "executed-unconfirmed", sorted(set(traced)), []
    executed = [t["model"] for t in truths if span & set((t.get("executed") or {}).get(path, ()))]
    if executed:
        return "executed-untraced", sorted(set(executed)), []
    return "not-executed", [], []


def _recompile_guard_names(reason: str, attr: str) -> bool:
    """Whether a `recompile_reason` line ("27/0: not self._transform_matrices   # source  # where")
    guards on `attr`: the guard expression before the source comment names it as an attribute
    (`self.attr`, `L['self'].attr`) or a `__dict__` key (`___dict_contains('attr', ...)`)."""
    expr = reason.split("\n", 1)[0].split("#", 1)[0]
    return re.search(rf"(\.{re.escape(attr)}\b|'{re.escape(attr)}')", expr) is not None


def _match_recompile(f: dict[str, Any], span: set[int], truths: list[dict[str, Any]]
                     ) -> tuple[str, list[str], list[str]]:
    m = _ATTR_IN_MESSAGE.search(f.get("message") or "")
    attr = m.group(1).split(".")[-1] if m else None
    confirm, evidence = [], []
    for t in truths:
        for r in t.get("recompiles") or ():
            reason = r.get("reason") or ""
            # the same attribute name in another class is another attribute: the guard must sit
            # in the finding's file (its line, or a frame of the user stack the reason quotes)
            here = r.get("path") == f["path"] or f'/{f["path"]}"' in reason
            if attr and here and _recompile_guard_names(reason, attr):
                confirm.append(t["model"])
                evidence.append(f"recompile {r['reason'].split(chr(10))[0][:80]}")
    if confirm:
        return "confirmed", sorted(set(confirm)), sorted(set(evidence))[:5]
    ran = [t["model"] for t in truths
           if span & set((t.get("traced") or {}).get(f["path"], ()))
           or span & set((t.get("executed") or {}).get(f["path"], ()))]
    if ran:
        return "not-checkable", sorted(set(ran)), [f"ran without a recompile on {attr}"]
    return "not-executed", [], []


def label_key(lib: str, f: dict[str, Any]) -> tuple[str, str, str, str]:
    return (lib, f["rule"], f["path"], " ".join((f.get("source") or "").split()))


def load_labels(path: str) -> tuple[dict[tuple[str, str, str, str], list[dict[str, Any]]],
                                    dict[tuple[str, str, int, str], dict[str, Any]]]:
    if not os.path.exists(path):
        return {}, {}
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    by_key: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for lab in data.get("findings", []):
        by_key[(lab["lib"], lab["rule"], lab["path"],
                " ".join(lab.get("source", "").split()))].append(lab)
    sites = {(s["lib"], s["path"], int(s["line"]), s["kind"]): s for s in data.get("sites", [])}
    return by_key, sites


def pick_label(cands: list[dict[str, Any]], line: int) -> dict[str, Any] | None:
    if not cands:
        return None
    return min(cands, key=lambda lab: abs(int(lab.get("line", line)) - line))


# ------------------------------------------------------------------ the whole evaluation
def evaluate(results: str, labels_path: str, check_dir: str = "check") -> dict[str, Any]:
    labels, site_labels = load_labels(labels_path)
    libs = sorted(os.path.basename(p)[:-5]
                  for p in glob.glob(os.path.join(results, check_dir, "*.json")))
    revisions: dict[str, Any] = {}
    findings_out: list[dict[str, Any]] = []
    sites_out: list[dict[str, Any]] = []
    models_out: list[dict[str, Any]] = []
    for lib in libs:
        check, truths = load_library(results, lib, check_dir)
        revisions[lib] = check["benchmark"].get("pt2bot")
        facts = Facts(check["benchmark"]["package_dir"])
        ok_truths = [t for t in truths if t.get("status") in ("ok", "compile_error")]
        for t in truths:
            models_out.append({"lib": lib, "model": t["model"], "status": t.get("status"),
                               "error": (t.get("error") or "")[:200] or None,
                               "graph_count": t.get("graph_count"),
                               "breaks": len(t.get("breaks") or []),
                               "specializations": len(t.get("specializations") or []),
                               "executed_lines": sum(len(v) for v in (t.get("executed") or {}).values()),
                               "wall_s": t.get("wall_s"), "note": t.get("note"),
                               "cases": t.get("cases"), "errors": t.get("errors") or []})
        for f in check["findings"]:
            ff = facts.get(f["path"])
            span = ff.span(f["line"], f.get("end_line"), f.get("col"))
            auto, models_hit, evidence = match_finding(f, span, ok_truths)
            conds = ff.conditions(f["line"], f.get("col"))
            if auto == "executed-unconfirmed" and any(k == "inline" for k, _c in conds):
                auto = "executed-conditional"   # the statement ran; the finding's part may not
            lab = pick_label([lab for lab in labels.get(label_key(lib, f), [])
                              if lab.get("message_contains", "") in (f.get("message") or "")],
                             f["line"])
            verdict = None
            if lab is not None:
                verdict = lab["verdict"]
            elif auto == "confirmed":
                verdict = True
            elif auto == "executed-unconfirmed":
                verdict = False
            auto_verdict = {"confirmed": True, "executed-unconfirmed": False}.get(auto)
            findings_out.append({
                "lib": lib, "rule": f["rule"], "family": family(f["rule"]), "path": f["path"],
                "line": f["line"], "function": f.get("function"), "severity": f.get("severity"),
                "source": " ".join((f.get("source") or "").split())[:200],
                "stated_condition": f.get("condition"),
                "conditions": [c for _k, c in conds], "condition_kinds": [k for k, _c in conds],
                "auto": auto, "models": models_hit, "evidence": evidence,
                "verdict": verdict, "hand": lab is not None,
                "disagrees": lab is not None and auto_verdict is not None and auto_verdict != verdict,
                "pattern": lab.get("pattern") if lab else None,
                "reason": lab.get("reason") if lab else None,
                "guard": lab.get("guard") if lab else (conds[0][1] if conds else None),
            })
        for s in truth_sites(ok_truths, facts):
            found = site_findings(s, check["findings"], facts)
            flagged = [f["rule"] for f, _ok in found]
            compatible = [f["rule"] for f, ok in found if ok]
            fam = s["family"]
            sl = site_labels.get((lib, s["path"], s["line"], s["kind"]))
            if sl and sl.get("exclude"):
                fam = None      # a hand label says this is no site (e.g. a fixed dim)
            sites_out.append({"lib": lib, **{k: v for k, v in s.items() if k != "stack"},
                              "family": fam, "excluded": bool(sl and sl.get("exclude")),
                              "stack": [f"{fr['path']}:{fr['line']}" for fr in s["stack"]],
                              "flagged_by": sorted(set(compatible)),
                              "flagged_any": sorted(set(flagged)),
                              "pattern": sl.get("pattern") if sl else None,
                              "note": sl.get("reason") if sl else None,
                              "caused_by": (sl or {}).get("caused_by")})
        _flag_through_causes([x for x in sites_out if x["lib"] == lib])
    return {"findings": findings_out, "sites": sites_out, "models": models_out,
            "figures": figures(findings_out, sites_out), "split": split(libs, findings_out, sites_out),
            "pt2bot": revisions}


def split(libs: list[str], findings: list[dict[str, Any]], sites: list[dict[str, Any]]) -> dict[str, Any]:
    """The "all" figures of the libraries the rules were tuned on and of each batch of held-out
    ones (models.HELD_OUT_BATCHES): how far the figures on tuned-on code carry over to code
    nobody tuned on. Batches stay apart: an earlier batch may have been tuned on since."""
    from models import HELD_OUT, HELD_OUT_BATCHES   # beside this file; imports no library

    out: dict[str, Any] = {}
    groups = [("tuned", [lib for lib in libs if lib not in HELD_OUT])]
    for name, batch in HELD_OUT_BATCHES.items():
        members = [lib for lib in libs if lib in batch]
        groups.append((name, members))
        # and each library of a batch of several alone, after it: a batch's figure can hide one
        # library's (a batch of one is that library already)
        if len(members) > 1:
            groups += [(f"lib:{lib}", [lib]) for lib in members]
    for name, group in groups:
        if group:
            fig = figures([f for f in findings if f["lib"] in group], [s for s in sites if s["lib"] in group])
            out[name] = {"libraries": group, **fig["all"]}
    return out


def _flag_through_causes(sites: list[dict[str, Any]]) -> None:
    """A site whose label names its cause (`caused_by`) is flagged by what flags the cause."""
    for s in sites:
        c = s.get("caused_by")
        if not c or s["flagged_by"]:
            continue
        cause = next((x for x in sites if x["path"] == c["path"] and x["line"] == int(c["line"])
                      and x["kind"] == c["kind"] and (not c.get("gb") or x["gb"] == c["gb"])), None)
        if cause is None:
            print(f"evaluate: caused_by of {s['lib']} {s['path']}:{s['line']} names no site: {c}")
            continue
        if cause["flagged_by"]:
            s["flagged_by"] = list(cause["flagged_by"])
            s["flagged_via"] = f"{cause['path']}:{cause['line']} {cause['gb'] or cause['kind']}"


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 3) if b else None


def figures(findings: list[dict[str, Any]], sites: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fam in FAMILIES + ("all",):
        fs = [f for f in findings if fam == "all" or f["family"] == fam]
        unstated = [f for f in fs if not f["stated_condition"]]
        judged = [f for f in unstated if f["verdict"] is not None]
        true = sum(1 for f in judged if f["verdict"])
        auto_judged = [f for f in unstated if f["auto"] in ("confirmed", "executed-unconfirmed")]
        auto_true = sum(1 for f in auto_judged if f["auto"] == "confirmed")
        under = [f for f in fs if f["conditions"]]
        ss = [s for s in sites if s["family"] and (fam == "all" or s["family"] == fam)]
        hit = [s for s in ss if s["flagged_by"]]
        hit_any = [s for s in ss if s["flagged_any"]]
        brk = [s for s in ss if s["kind"] == "break"]
        shp = [s for s in ss if s["kind"] != "break"]
        out[fam] = {
            "findings": len(fs), "stated_without_condition": len(unstated),
            "judged": len(judged), "true": true, "precision": _ratio(true, len(judged)),
            "auto_judged": len(auto_judged), "auto_precision": _ratio(auto_true, len(auto_judged)),
            "under_condition": len(under), "share_under_condition": _ratio(len(under), len(fs)),
            # of the findings on a path the code takes only under a condition (the AST), how
            # many pt2bot states that condition for (the rest read as definite claims)
            "under_condition_stated": sum(1 for f in under if f["stated_condition"]),
            "share_under_condition_stated": _ratio(sum(1 for f in under if f["stated_condition"]),
                                                   len(under)),
            # pt2bot's own `condition` key (docs/formats.md): the issue's "share of findings that
            # carry a condition"; precision is over the others (`stated_without_condition`).
            "stated_condition": len(fs) - len(unstated),
            "share_stated_condition": _ratio(len(fs) - len(unstated), len(fs)),
            "auto": dict(Counter(f["auto"] for f in fs)),
            "sites": len(ss), "sites_flagged": len(hit), "recall": _ratio(len(hit), len(ss)),
            "recall_any_rule": _ratio(len(hit_any), len(ss)),
            # the same recall apart for graph-break sites (the issue's target: "default-path
            # break sites in kinds the rules cover") and specialisation/guard sites
            "break_sites": len(brk), "break_sites_flagged": sum(1 for s in brk if s["flagged_by"]),
            "recall_breaks": _ratio(sum(1 for s in brk if s["flagged_by"]), len(brk)),
            "recall_breaks_any_rule": _ratio(sum(1 for s in brk if s["flagged_any"]), len(brk)),
            "shape_sites": len(shp), "shape_sites_flagged": sum(1 for s in shp if s["flagged_by"]),
            "recall_shapes": _ratio(sum(1 for s in shp if s["flagged_by"]), len(shp)),
            "recall_shapes_any_rule": _ratio(sum(1 for s in shp if s["flagged_any"]), len(shp)),
        }
    per_rule: dict[str, dict[str, Any]] = {}
    for rule in sorted({f["rule"] for f in findings}):
        fs = [f for f in findings if f["rule"] == rule]
        judged = [f for f in fs if not f["stated_condition"] and f["verdict"] is not None]
        true = sum(1 for f in judged if f["verdict"])
        per_rule[rule] = {"findings": len(fs), "stated_condition": sum(1 for f in fs if f["stated_condition"]),
                          "judged": len(judged), "true": true, "precision": _ratio(true, len(judged))}
    out["per_rule"] = per_rule
    out["uncovered_sites"] = sum(1 for s in sites if not s["family"])
    out["patterns_false"] = dict(Counter(f["pattern"] or "(unlabelled)" for f in findings
                                         if f["verdict"] is False).most_common())
    out["patterns_true_conditional"] = dict(Counter(
        f["pattern"] or "(unlabelled)" for f in findings
        if f["verdict"] is True and f["auto"] != "confirmed").most_common())
    out["missed_patterns"] = dict(Counter(s["pattern"] or "(unlabelled)" for s in sites
                                          if s["family"] and not s["flagged_by"]).most_common())
    return out


def main(results: str, labels_path: str, md_path: str, tag: str | None = None) -> dict[str, Any]:
    import report   # the markdown writer; beside this file
    # Every stored revision's findings are re-judged with this evaluation and these labels (not
    # only `tag`'s), so the comparison in RESULTS.md never mixes two versions of the matcher.
    tags = {os.path.basename(p)[len("check@"):] for p in glob.glob(os.path.join(results, "check@*"))
            if os.path.isdir(p)} | ({tag} if tag else set())
    for t in sorted(tags):
        ev_tag = evaluate(results, labels_path, f"check@{t}")
        with open(os.path.join(results, f"evaluation@{t}.json"), "w", encoding="utf-8") as fh:
            json.dump(ev_tag, fh, indent=1, sort_keys=True)
            fh.write("\n")
    ev = evaluate(results, labels_path)
    with open(os.path.join(results, "evaluation.json"), "w", encoding="utf-8") as fh:
        json.dump(ev, fh, indent=1, sort_keys=True)
        fh.write("\n")
    others = {}
    for p in sorted(glob.glob(os.path.join(results, "evaluation@*.json"))):
        with open(p, encoding="utf-8") as fh:
            others[os.path.basename(p)[len("evaluation@"):-5]] = json.load(fh)
    env_path = os.path.join(results, "environment.json")
    env = {}
    if os.path.exists(env_path):
        with open(env_path, encoding="utf-8") as fh:
            env = json.load(fh)
    with open(md_path, "w", encoding="utf-8") as fh:
        fh.write(report.render(ev, env, others))
    return ev
