"""jsonio: read_json, the one reader of JSON another job wrote (shards, results files,
baselines), and atomic_write_bytes, the one atomic write of a file."""
from __future__ import annotations

import os
import stat

import pytest

from pt2bot import jsonio
from pt2bot.errors import UserError
from pt2bot.jsonio import atomic_write_bytes, read_json, write_json, write_text


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


# ---- atomic_write_bytes: the one atomic write (jsonio's writers, the check's cache, pt2bot init)

def test_write_text_replaces_the_file_whole_owner_only(tmp_path):
    p = tmp_path / "new" / "dir" / "report.md"       # the directory is created
    write_text(str(p), "first")
    write_text(str(p), "second\n")
    assert p.read_bytes() == b"second\n"             # a newline at the end, once
    assert stat.S_IMODE(p.stat().st_mode) == 0o600   # what jsonio has always written
    assert os.listdir(p.parent) == ["report.md"]     # no temp file left


def test_atomic_write_mode_is_the_callers_less_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        atomic_write_bytes(str(tmp_path / "pack"), b"\0" * 70_000, mode=0o644)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "pack").stat().st_mode) == 0o640
    assert (tmp_path / "pack").read_bytes() == b"\0" * 70_000


class _Os:
    """`os` as jsonio sees it, with some calls replaced (the real module stays untouched: the
    test runner's own threads write through it)."""

    def __init__(self, **calls):
        self.__dict__.update(calls)

    def __getattr__(self, name):
        return getattr(os, name)


@pytest.mark.parametrize("fail", ["write", "replace"])
def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path, monkeypatch, fail):
    p = tmp_path / "r.json"
    p.write_bytes(b"old")

    def half_then_fail(fd, data):
        os.write(fd, bytes(data[:2]))
        raise OSError(28, "No space left on device")

    def no_replace(src, dst):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(jsonio, "os", _Os(**{fail: half_then_fail if fail == "write" else no_replace}))
    with pytest.raises(OSError):
        atomic_write_bytes(str(p), b"new content")
    assert p.read_bytes() == b"old" and os.listdir(tmp_path) == ["r.json"]


def test_the_temp_file_is_hidden_and_named_for_the_cache_sweep(tmp_path, monkeypatch):
    # hidden: an artifact upload leaves it out; `*.tmp`: the cache's sweep removes a killed
    # writer's (pt2bot/static/cache.py)
    seen = []
    monkeypatch.setattr(jsonio, "os", _Os(replace=lambda src, dst: (seen.append(src), os.replace(src, dst))))
    atomic_write_bytes(str(tmp_path / ("x" * 250)), b"1")          # a long name still fits
    [tmp] = seen
    name = os.path.basename(tmp)
    assert name.startswith(".") and name.endswith(".tmp") and len(name) < 255
    assert (tmp_path / ("x" * 250)).read_bytes() == b"1"
