"""report.json: writing it (strict JSON) and its JSON Schema.

The schema (`pt2bot/schemas/report.schema.json`) describes the file for other tools and the
tests (`validation_errors` needs jsonschema, a test dependency). The privileged publisher does
not use it: it reads an untrusted artifact with its own typed, capped field checks
(pt2bot/publish/artifact.py), which need no dependency beyond the standard library. Writing goes through `jsonable`: NaN/inf become null (JSON has no such numbers, and a
file with them would be rejected by strict readers), tuples become lists.
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any

from pt2bot.jsonio import dumps, jsonable, write_json

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "schemas", "report.schema.json")


@lru_cache(maxsize=1)
def load_schema() -> dict:
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        return json.load(fh)


def validation_errors(report: Any, *, limit: int = 20) -> list[str]:
    """Schema violations as `path.to.field: message` (empty when valid). Needs jsonschema."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_schema())
    out = []
    for err in sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in err.absolute_path) or "(root)"
        out.append(f"{where}: {err.message[:300]}")
        if len(out) >= limit:
            break
    return out


__all__ = ["jsonable", "dumps", "write_json", "load_schema", "validation_errors", "SCHEMA_PATH"]
