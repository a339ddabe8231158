"""Development-time: copy the installed torch's graph-break registry into pt2bot/data/.

`pt2bot check` and the renderers read GB ids, types and hints from the vendored copy so that
they never need torch (pt2bot/gb.py). Re-run after moving the development torch:

    .venv/bin/python tools/vendor_gb_registry.py
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from pt2bot import gb  # noqa: E402


def main() -> int:
    src = gb.installed_registry_path()
    if src is None:
        print("no torch with a graph_break_registry.json is installed", file=sys.stderr)
        return 1
    import importlib.metadata as md
    with open(src, encoding="utf-8") as fh:
        raw = json.load(fh)
    out = {"torch": md.version("torch"), "registry": raw}
    with open(gb.VENDORED, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=0, sort_keys=True, ensure_ascii=False)
        fh.write("\n")
    print(f"{gb.VENDORED}: {len(raw)} ids from torch {out['torch']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
