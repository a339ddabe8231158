"""jsonio.read_json: the one reader of JSON another job wrote (shards, results files, baselines)."""
from __future__ import annotations

import pytest

from pt2bot.errors import UserError
from pt2bot.jsonio import read_json, write_json


def test_reads_what_write_json_wrote(tmp_path):
    p = tmp_path / "r.json"
    write_json(str(p), {"a": [1, 2.5, None], "nan": float("nan")})
    assert read_json(str(p), what="merge", max_bytes=1024) == {"a": [1, 2.5, None], "nan": None}


@pytest.mark.parametrize("content,message", [
    (b"x" * 2048, r"--baseline: .*r\.json: 2,048 bytes is over the 1,024-byte cap"),
    (b"{not json", r"--baseline: .*r\.json: not valid JSON"),
    (b"[" * 200_000, r"--baseline: .*r\.json: not valid JSON"),   # nesting: RecursionError
    (b"\xff\xfe{}", r"--baseline: .*r\.json: not valid JSON"),     # not UTF-8
])
def test_every_bad_file_is_a_located_user_error(tmp_path, content, message):
    p = tmp_path / "r.json"
    p.write_bytes(content)
    with pytest.raises(UserError, match=message):
        read_json(str(p), what="--baseline", max_bytes=1024 if len(content) == 2048 else 10**7)


def test_a_missing_file_names_the_file(tmp_path):
    with pytest.raises(UserError, match=r"merge: .*gone\.json: cannot read"):
        read_json(str(tmp_path / "gone.json"), what="merge", max_bytes=10)
