"""What dynamo compiled, as two digests that compare across processes and worktrees.

The latency gate (pt2bot/latency_gate.py) gives no latency verdict for a model whose
compiled graphs and guards are the same on base and head (and whose changed code it never
ran). The structured trace of the "breaks" and "matrix" phases (`compile/<model>/<side>/
trace.log`, pt2bot/smoke/trace.py) holds, per compile, the FX graph dynamo produced
(`dynamo_output_graph`) and its guard tree (`dynamo_cpp_guards_str`). Neither is equal
as text across two runs of the same code:

- graphs carry `# File: /abs/path.py:12 in forward, code: ...` comments (the worktree's
  path, and line numbers that any edit above moves): comment lines are dropped;
- guards carry object ids (`___check_obj_id(G['torch'], 139724077682496)`, type ids),
  addresses (`0x7f...`), a trailing `# source  # path:line in fn` per guard and the time
  the guards took to build (`Guard latency = 190.70 us`): ids and addresses become `<id>`,
  trailing comments and the timing line are dropped.

The repository root, wherever it still appears, becomes `<repo>`. What is left (graph code
with shapes, dtypes and ops; guard kinds, sources, sizes, strides, types) is hashed, in
compile order. A trace that was cut at its cap, or holds no compile, gives no signature:
unknown, never "equal". Torch-free: the runner reads the file after the worker exits.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Iterator

GRAPH_KIND = "dynamo_output_graph"
GUARDS_KIND = "dynamo_cpp_guards_str"
_HEADER = re.compile(r"^[VIWEC]\d{4} [\d:.]+ +\d+ [^\]]*\] (\{.*\})\s*$")
_ID = re.compile(r"(?<![\w.])\d{9,}(?![\w.])")         # object / type ids: 9+ digits
_ADDR = re.compile(r"0x[0-9a-fA-F]{6,}")
_GUARD_TIMING = re.compile(r"^\s*Guard latency = .*$")


def _records(path: str) -> Iterator[tuple[str, str]]:
    """(kind, payload) of each record in a trace file: the first key of its metadata, and
    its tab-indented payload lines joined."""
    kind: str | None = None
    payload: list[str] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith("\t"):
                if kind is not None:
                    payload.append(line[1:].rstrip("\n"))
                continue
            if kind is not None:
                yield kind, "\n".join(payload)
            kind, payload = None, []
            m = _HEADER.match(line)
            if not m:
                continue
            try:
                meta = json.loads(m.group(1))
            except ValueError:
                continue
            if isinstance(meta, dict) and meta:
                kind = str(next(iter(meta)))
    if kind is not None:
        yield kind, "\n".join(payload)


def normalise_graph(code: str, repo_root: str | None = None) -> str:
    """A graph's code without comment lines (file/line/source) or blank lines."""
    out = []
    for line in code.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        out.append(line.rstrip())
    text = "\n".join(out)
    return text.replace(repo_root, "<repo>") if repo_root else text


def normalise_guards(text: str, repo_root: str | None = None) -> str:
    """A guard tree without ids, addresses, trailing source comments or timings."""
    out = []
    for line in text.splitlines():
        if _GUARD_TIMING.match(line) or not line.strip():
            continue
        # A guard line's own text never holds "  # " (its source comment starts there).
        line = line.split("  # ", 1)[0].rstrip()
        line = _ADDR.sub("<addr>", _ID.sub("<id>", line))
        out.append(line)
    text = "\n".join(out)
    return text.replace(repo_root, "<repo>") if repo_root else text


def trace_signature(path: str, repo_root: str | None = None) -> dict[str, object] | None:
    """`{"graphs": "sha256:...", "guards": "sha256:...", "compiles": N}` of a trace file,
    or None when it holds no compile (or cannot be read)."""
    graphs = hashlib.sha256()
    guards = hashlib.sha256()
    n_graphs = n_guards = 0
    try:
        for kind, payload in _records(path):
            if kind == GRAPH_KIND:
                graphs.update(normalise_graph(payload, repo_root).encode() + b"\0")
                n_graphs += 1
            elif kind == GUARDS_KIND:
                guards.update(normalise_guards(payload, repo_root).encode() + b"\0")
                n_guards += 1
    except OSError:
        return None
    if not n_guards:
        return None
    return {"graphs": "sha256:" + graphs.hexdigest(), "guards": "sha256:" + guards.hexdigest(),
            "compiles": n_guards, "graph_count": n_graphs}


__all__ = ["normalise_graph", "normalise_guards", "trace_signature"]
