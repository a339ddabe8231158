"""Download the pinned wheels (no deps) into a cache outside the repository.

    python benchmarks/replay/fetch.py [--cache /tmp/pt2bot-replay/wheels] [--lib NAME ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from versions import LIBRARIES  # noqa: E402

# PT2BOT_REPLAY_WORK moves the wheels and the throw-away repositories (replay.py, report.py) out
# of the default place, so two engineers' replays on one machine do not rebuild each other's repos.
WORK = Path(os.environ.get("PT2BOT_REPLAY_WORK", "/tmp/pt2bot-replay"))
DEFAULT_CACHE = WORK / "wheels"


def wheel_for(cache: Path, name: str, version: str) -> Path | None:
    stem = name.replace("-", "_")
    hits = sorted(cache.glob(f"{stem}-{version}-*.whl")) + sorted(cache.glob(f"{stem}-{version}.tar.gz"))
    return hits[0] if hits else None


def fetch(cache: Path, libs: list[str] | None = None) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    for name, (_pkg, versions) in LIBRARIES.items():
        if libs and name not in libs:
            continue
        for v in versions:
            if wheel_for(cache, name, v):
                continue
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                            "--only-binary", ":all:", f"{name}=={v}", "-d", str(cache)], check=True)
            print(f"{name}=={v}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--lib", action="append", help="only this library (repeatable)")
    a = ap.parse_args()
    fetch(a.cache, a.lib)
