"""`pt2bot check a.py b.py`: the rest of the repository is context; the per-file cache.

Pre-commit passes only the changed files. The analysis must still see the package's base
classes, helpers and callers in the other files (the config's `static.paths`, else the git
root), report only on the given files, and not pay for the whole tree again on every commit
(the cache in the user's cache directory, pt2bot/static/cache.py).
"""
from __future__ import annotations

import json
import os
import stat
import sys
import textwrap

import pytest

from pt2bot.cli import main
from tests.gitrepo import GitRepo

BASE = """\
    import torch.nn as nn

    class Base(nn.Module):
        def scale(self, x):
            return x * 2
    """
SUB = """\
    from pkg.base import Base

    class Sub(Base):
        def forward(self, x):
            n = x.sum().item()
            return self.scale(x) + n
    """
HELPERS = """\
    def shrink(t):
        return t.tolist()
    """
CALLER = """\
    import torch.nn as nn
    from pkg.helpers import shrink

    class Net(nn.Module):
        def forward(self, x):
            return shrink(x)
    """


def make_repo(tmp_path, files: dict[str, str]) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    for rel, text in files.items():
        repo.write(rel, textwrap.dedent(text))
    repo.commit("base")
    return repo


def check(cwd, args, capsys, env=None) -> tuple[int, list[dict]]:
    old = os.getcwd()
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    os.chdir(cwd)
    try:
        rc = main(["check", "--format", "json", *args])
    finally:
        os.chdir(old)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    out = capsys.readouterr().out
    return rc, json.loads(out)["findings"]


def rules_at(findings) -> set[tuple[str, int, str]]:
    return {(f["path"], f["line"], f["rule"]) for f in findings}


def test_base_class_in_another_file_is_seen(tmp_path, capsys):
    """Fails on the old code: given only pkg/sub.py, `Sub` did not look like an nn.Module."""
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB})
    rc, fs = check(repo.path, ["--no-cache", "pkg/sub.py"], capsys)
    assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101")}
    assert rc == 1


def test_callers_in_other_files_and_only_given_files_reported(tmp_path, capsys):
    """A helper is compiled code because a model elsewhere calls it; that model's own findings
    (pkg/model.py has one) are not reported when only the helper's file is given."""
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/helpers.py": HELPERS, "pkg/caller.py": CALLER,
                                "pkg/model.py": SUB.replace("pkg.base", "pkg.base2"),
                                "pkg/base2.py": BASE})
    rc, fs = check(repo.path, ["--no-cache", "pkg/helpers.py"], capsys)
    assert rules_at(fs) == {("pkg/helpers.py", 2, "PTC102")}
    # two given files: both reported, nothing else
    rc, fs = check(repo.path, ["--no-cache", "pkg/helpers.py", "pkg/model.py"], capsys)
    assert rules_at(fs) == {("pkg/helpers.py", 2, "PTC102"), ("pkg/model.py", 5, "PTC101")}


DISABLED = """\
    import torch

    @torch.compiler.disable
    def scale(y):
        return y * 2

    def _shift(y):
        return y + 1

    shift = torch.compiler.disable(_shift)
    """
USES_DISABLED = """\
    import torch.nn as nn
    from pkg import util

    class Net(nn.Module):
        def forward(self, x):
            y = util.scale(x)
            y = util.shift(y)
            return util.scale(y)  # noqa: PTC403
    """


def test_calls_of_a_disabled_function_in_another_file_are_reported_at_the_calls(tmp_path, capsys):
    """Dynamo breaks the graph at each call of a disabled function from compiled code, in the
    caller's file (tests/fixtures/rules/ptc403_compiler_disable.py, measured): the findings are
    at the calls in pkg/model.py, with its source line and its `# noqa`; the file that only
    defines the functions has none. Fails on the old code: it reported the decorator."""
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/util.py": DISABLED, "pkg/model.py": USES_DISABLED})
    rc, fs = check(repo.path, ["--no-cache", "pkg/model.py", "pkg/util.py"], capsys)
    assert [(f["path"], f["line"], f["col"], f["rule"], f["gb"], f["source"]) for f in fs] == [
        ("pkg/model.py", 6, 12, "PTC403", "GB0098", "y = util.scale(x)"),
        ("pkg/model.py", 7, 12, "PTC403", "GB0098", "y = util.shift(y)")]
    assert "pkg/util.py:3" in fs[0]["message"]
    rc, fs = check(repo.path, ["--no-cache", "pkg/util.py"], capsys)
    assert fs == []
    # the same from the cache (the lines are read again where no walk kept them)
    cold, _ = run(repo.path, new_cache(tmp_path / "c"))
    warm, s = run(repo.path, new_cache(tmp_path / "c"))
    assert warm == cold and s.parsed == 0 and [(f["line"], f["source"]) for f in warm] == [
        (6, "y = util.scale(x)"), (7, "y = util.shift(y)")]


SCORES = """\
    import torch

    def scores(x: torch.Tensor):
        return x.sum(-1)
    """
GATED = """\
    import torch.nn as nn
    from pkg.scores import scores

    class Gated(nn.Module):
        def forward(self, x):
            if scores(x).sum() > 0:
                return x + 1
            return x
    """


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_tensor_returned_by_another_file_is_judged_from_that_file_as_it_is_now(tmp_path, jobs):
    """`if scores(x).sum() > 0:` is a data-dependent branch because `scores`, in another file,
    returns a tensor (tests/fixtures/rules/ptc201_cross_file.py runs such cases through dynamo).
    The caller's cached record holds the claim pending; the helper's record says what it
    returns: when only the helper changes, the warm check reads the caller from the cache and
    still answers from the helper as it is now."""
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/scores.py": SCORES, "pkg/model.py": GATED})
    cfg = StaticConfig(select=("ALL",))
    cold, s1 = run(repo.path, new_cache(tmp_path / "c", cfg), jobs=jobs, cfg=cfg)
    assert [(f["path"], f["line"], f["rule"]) for f in cold] == [("pkg/model.py", 6, "PTC201")]
    repo.write("pkg/scores.py", textwrap.dedent(SCORES).replace("x.sum(-1)", "float(x.shape[-1])"))
    warm, s2 = run(repo.path, new_cache(tmp_path / "c", cfg), jobs=jobs, cfg=cfg)
    assert warm == [] and s2.parsed == 1 and s2.cached >= 1
    repo.write("pkg/scores.py", textwrap.dedent(SCORES))
    again, s3 = run(repo.path, new_cache(tmp_path / "c", cfg), jobs=jobs, cfg=cfg)
    assert again == cold and s3.parsed == 1 and s3.cached >= 1


def test_static_paths_bound_the_context(tmp_path, capsys):
    """With `static.paths` in the config, the context is those paths, not the whole git root."""
    repo = make_repo(tmp_path, {"src/pkg/__init__.py": "", "src/pkg/sub.py": SUB.replace("pkg.base", "src.pkg.base"),
                                "src/pkg/base.py": BASE, "pt2bot.yml": "version: 1\nstatic:\n  paths: [src/]\n",
                                # outside static.paths: not read (a syntax error here would be PTC000)
                                "scripts/broken.py": "def (:\n"})
    rc, fs = check(repo.path, ["--no-cache", "src/pkg/sub.py"], capsys)
    assert rules_at(fs) == {("src/pkg/sub.py", 5, "PTC101")}


def test_subdirectory_as_cwd_reports_paths_as_before(tmp_path, capsys):
    """Run from a subdirectory without a config: paths stay relative to the cwd, and the
    context is what lies under it (nothing above can be named relative to it)."""
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE.replace("Base", "B0"),
                                "pkg/inner/base.py": BASE, "pkg/inner/sub.py": SUB.replace("pkg.base", "base")})
    rc, fs = check(repo.path / "pkg" / "inner", ["--no-cache", "sub.py"], capsys)
    assert rules_at(fs) == {("sub.py", 5, "PTC101")}


def test_outside_git_no_context(tmp_path, capsys):
    """Not in a git repository and no config: only the given files (never the whole parent dir)."""
    d = tmp_path / "plain"
    (d / "pkg").mkdir(parents=True)
    (d / "pkg" / "base.py").write_text(textwrap.dedent(BASE))
    (d / "pkg" / "sub.py").write_text(textwrap.dedent(SUB))
    if any((p / ".git").exists() for p in [tmp_path, *tmp_path.parents]):
        pytest.skip("the temp dir is inside a git repository")
    rc, fs = check(d, ["--no-cache", "pkg/sub.py"], capsys)
    assert fs == [] and rc == 0


# ------------------------------------------------------------------------------------------
# the cache (pt2bot/static/cache.py)

from pt2bot.config import StaticConfig  # noqa: E402
from pt2bot.rules import select_rules  # noqa: E402
from pt2bot.static import check_paths  # noqa: E402
from pt2bot.static import cache as cache_mod  # noqa: E402
from pt2bot.static.cache import (MAX_PACKS, PACK_SUFFIX, SCANS, Cache, pack_bytes,  # noqa: E402
                                 pack_records, resolve_cache_dir)
from pt2bot.static.files import Stats  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "rules")


def run(root, cache, paths=(), jobs=1, cfg=None, context=()):
    stats = Stats()
    fs = check_paths(str(root), list(paths), cfg or StaticConfig(), jobs=jobs, cache=cache, stats=stats,
                     context=context)
    return [f.to_dict() for f in fs], stats


def new_cache(d, cfg=None):
    cfg = cfg or StaticConfig()
    return Cache(str(d), tuple(r.code for r in select_rules(cfg.select, cfg.ignore)))


def entries(d) -> list[str]:
    """Every file the cache wrote but its tags and the text scans: packs (and any temp file
    left behind)."""
    return sorted(os.path.join(dp, f) for dp, _, fs in os.walk(d) for f in fs
                  if f not in (".gitignore", "CACHEDIR.TAG", SCANS))


def packs(d) -> list[str]:
    return [p for p in entries(d) if p.endswith(PACK_SUFFIX)]


def records(pack) -> list[tuple[str, bytes]]:
    """(rel, record) of a pack, framed as pt2bot/static/cache.py writes them."""
    with open(pack, "rb") as fh:
        return pack_records(fh.read())


def write_pack(pack, recs) -> None:
    """A pack whose framing is whole, holding `recs` as given (damaged or forged)."""
    with open(pack, "wb") as fh:
        fh.write(pack_bytes(recs))


def tree(d, n=6) -> dict[str, str]:
    """n modules, each a model with one finding; written under `d`."""
    files = {f"m{i}.py": textwrap.dedent(SUB).replace("from pkg.base import Base", "import torch.nn as nn")
             .replace("(Base)", "(nn.Module)").replace("class Sub", f"class Sub{i}") for i in range(n)}
    d.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (d / rel).write_text(text)
    return files


@pytest.mark.parametrize("jobs", [1, 2])
def test_warm_check_reads_every_file_from_the_cache_and_finds_the_same(tmp_path, jobs):
    cfg = StaticConfig(select=("ALL",))
    cold, s1 = run(FIXTURES, new_cache(tmp_path / "c", cfg), jobs=jobs, cfg=cfg)
    assert s1.cached == 0 and s1.parsed == s1.files > 10 and s1.written == s1.files
    warm, s2 = run(FIXTURES, new_cache(tmp_path / "c", cfg), jobs=jobs, cfg=cfg)
    assert s2.cached == s2.files and s2.parsed == 0 and s2.reopened == 0 and s2.written == 0
    nocache, _ = run(FIXTURES, None, jobs=jobs, cfg=cfg)
    assert warm == cold == nocache and len(cold) > 20
    # another rule set is another key: nothing shared, still right
    other = StaticConfig(select=("PTC1",))
    fs, s3 = run(FIXTURES, new_cache(tmp_path / "c", other), cfg=other)
    assert s3.cached == 0 and fs == run(FIXTURES, None, cfg=other)[0]


def test_one_changed_file_is_the_only_one_parsed(tmp_path):
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB,
                                "pkg/helpers.py": HELPERS, "pkg/caller.py": CALLER})
    cache = tmp_path / "c"
    fs, s = run(repo.path, new_cache(cache))
    assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101"), ("pkg/helpers.py", 2, "PTC102")}
    repo.write("pkg/sub.py", textwrap.dedent(SUB).replace("n = x.sum().item()", "n = 1"))
    fs, s = run(repo.path, new_cache(cache))
    assert (s.parsed, s.cached, s.written, s.unread) == (1, 3, 1, 1)   # pkg/__init__.py: never needed
    assert rules_at(fs) == {("pkg/helpers.py", 2, "PTC102")}


def test_function_reached_later_in_a_cached_file_is_walked(tmp_path):
    """The cached summary of util.py has no walk of `later` (nothing reached it); a changed
    model now calls it: util.py is parsed again for that function, and its finding appears."""
    # (util.py defines a module too: parsed, and cached, by the first check)
    repo = make_repo(tmp_path, {"pkg/__init__.py": "",
                                "pkg/util.py": "def later(t):\n    return t.tolist()\n\n\nimport torch.nn as nn\n\n\n"
                                               "class Keep(nn.Module):\n    def forward(self, x):\n        return x\n",
                                "pkg/m.py": CALLER.replace("pkg.helpers import shrink", "pkg.util import later")
                                .replace("return shrink(x)", "return x")})
    cache = tmp_path / "c"
    fs, _ = run(repo.path, new_cache(cache))
    assert fs == []
    repo.write("pkg/m.py", repo.read("pkg/m.py").replace("return x", "return later(x)"))
    fs, s = run(repo.path, new_cache(cache))
    assert rules_at(fs) == {("pkg/util.py", 2, "PTC102")}
    assert (s.parsed, s.reopened) == (1, 1)
    fs, s = run(repo.path, new_cache(cache))      # and that walk is cached too
    assert rules_at(fs) == {("pkg/util.py", 2, "PTC102")} and (s.parsed, s.reopened) == (0, 0)


def test_corrupt_entries_are_misses(tmp_path):
    """Every record of the pack damaged (its framing kept whole): all misses, the same
    findings, every record rewritten."""
    cache = tmp_path / "c"
    good, _ = run(FIXTURES, new_cache(cache))
    (pack,) = packs(cache)
    recs = records(pack)
    damage = [lambda b: b[: len(b) // 2], lambda b: b"", lambda b: b"garbage\n" + b,
              lambda b: b[:-1] + bytes([b[-1] ^ 1]),                       # one bit in the payload
              lambda b: b.replace(b" ", b"  ", 1)]                         # header
    write_pack(pack, [(rel, damage[i % len(damage)](r)) for i, (rel, r) in enumerate(recs)])
    fs, s = run(FIXTURES, new_cache(cache))
    assert fs == good and s.cached == 0 and s.written == len(recs) == s.files
    assert run(FIXTURES, new_cache(cache))[1].cached == len(recs)   # rewritten, whole again


def test_broken_pack_framing_is_misses(tmp_path):
    """A pack cut short, with a wrong length, with another magic, or not a pack at all: the
    records from the break on are misses, never an error, and the next run rewrites them."""
    cache = tmp_path / "c"
    good, _ = run(FIXTURES, new_cache(cache))
    (pack,) = packs(cache)
    data = open(pack, "rb").read()
    n = len(records(pack))
    magic = b"pt2bot-pack/1\n"
    size, _, rest = data[len(magic):].partition(b"\n")
    broken = {"cut in half": data[: len(data) // 2], "first length too long": magic + size + b"0\n" + rest,
              "first length one more": magic + str(int(size) + 1).encode() + b"\n" + rest,
              "first length not a number": magic + b"x" + size + b"\n" + rest,
              "another magic": b"pt2bot-pack/0\n" + data[len(magic):], "empty": b"", "noise": os.urandom(5000)}
    for what, damaged in broken.items():
        for p in packs(cache):
            os.unlink(p)
        with open(pack, "wb") as fh:
            fh.write(damaged)
        fs, s = run(FIXTURES, new_cache(cache))
        assert fs == good, what
        assert (0 < s.cached < n) if what == "cut in half" else s.cached == 0, what
        assert s.written == n - s.cached, what
        assert run(FIXTURES, new_cache(cache))[1].cached == n, what


def test_an_entry_cannot_run_code_or_carry_other_objects(tmp_path):
    """A well-formed record (right header and checksum, in a whole pack) whose pickle calls
    os.system, or holds something else than a summary, is a miss, and nothing runs."""
    import pickle

    from pt2bot.static.cache import content_digest

    repo = make_repo(tmp_path, {"m.py": textwrap.dedent(SUB).replace("from pkg.base import Base", "import torch.nn as nn")
                                .replace("(Base)", "(nn.Module)")})
    cache = tmp_path / "c"
    good, _ = run(repo.path, new_cache(cache))
    (pack,) = packs(cache)
    ((rel, record),) = records(pack)
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    header = record.partition(b"\n")[0].split(b" ")
    for payload in (pickle.dumps(Evil()), pickle.dumps(({"not": "a summary"}, set())), pickle.dumps(None)):
        header[3] = content_digest(payload).encode()
        for p in packs(cache):        # the run before wrote a good record: only the forged one is left
            os.unlink(p)
        write_pack(pack, [(rel, b" ".join(header) + b"\n" + payload)])
        fs, s = run(repo.path, new_cache(cache))
        assert fs == good and s.cached == 0 and s.written == 1 and not marker.exists()


def default_dir(repo) -> str:
    where, why = resolve_cache_dir(str(repo.path))
    assert why == "default"
    return where


def test_cli_cache_is_the_checkouts_from_a_subdirectory_too(tmp_path, capsys):
    """Run from a subdirectory: the cache is the git root's (outside the checkout), not the cwd's."""
    repo = make_repo(tmp_path, {"pkg/inner/base.py": BASE, "pkg/inner/sub.py": SUB.replace("pkg.base", "base")})
    rc, fs = check(repo.path / "pkg" / "inner", ["sub.py"], capsys)
    assert rules_at(fs) == {("sub.py", 5, "PTC101")}
    assert entries(default_dir(repo))
    assert resolve_cache_dir(str(repo.path / "pkg" / "inner"))[0] == default_dir(repo)
    assert repo.git("status", "--porcelain", "--untracked-files=all") == ""
    rc2, fs2 = check(repo.path / "pkg" / "inner", ["sub.py"], capsys)
    assert (rc2, fs2) == (rc, fs)


def test_no_cache_and_env_override(tmp_path, capsys):
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB})
    rc, fs = check(repo.path, ["--no-cache", "pkg/sub.py"], capsys)
    assert not os.path.exists(default_dir(repo))
    elsewhere = tmp_path / "elsewhere"
    rc2, fs2 = check(repo.path, ["pkg/sub.py"], capsys, env={"PT2BOT_CACHE_DIR": str(elsewhere)})
    assert (rc2, fs2) == (rc, fs) and entries(elsewhere) and not os.path.exists(default_dir(repo))


def test_unwritable_cache_is_no_cache(tmp_path, capsys, monkeypatch):
    """A cache directory that cannot be created (here: a file stands in its path; the tests run
    as root, so permissions would not stop the writes) checks as usual."""
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB})
    (tmp_path / "file").write_text("")
    rc, fs = check(repo.path, ["pkg/sub.py"], capsys, env={"PT2BOT_CACHE_DIR": str(tmp_path / "file" / "c")})
    assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101")}
    monkeypatch.setattr(cache_mod, "user_cache_dir", lambda env=None: str(tmp_path / "file" / "pt2bot"))
    rc, fs = check(repo.path, ["pkg/sub.py"], capsys)
    assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101")}
    if os.geteuid() != 0:
        home = tmp_path / "home"
        home.mkdir()
        monkeypatch.setattr(cache_mod, "user_cache_dir", lambda env=None: str(home / "pt2bot"))
        os.chmod(home, stat.S_IRUSR | stat.S_IXUSR)
        try:
            rc, fs = check(repo.path, ["pkg/sub.py"], capsys)
        finally:
            os.chmod(home, stat.S_IRWXU)
        assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101")}


def test_committed_cache_is_not_trusted(tmp_path, capsys):
    """A branch that commits `.pt2bot-cache/` packs (forged to say its file has no findings)
    does not get them used: the cache is never read from the checkout. (More of these attacks,
    without git and case-folded, in tests/test_security_check.py.)"""
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB})
    clean = textwrap.dedent(SUB).replace("n = x.sum().item()", "n = 1")
    repo.write("pkg/sub.py", clean)
    check(repo.path, ["pkg/sub.py"], capsys)                       # records for the clean file
    (pack,) = packs(default_dir(repo))
    repo.write("pkg/sub.py", textwrap.dedent(SUB))                  # the real, bad content
    # forge: the clean summary under the bad file's digest
    from pt2bot.static.cache import content_digest
    bad = content_digest((repo.path / "pkg" / "sub.py").read_bytes())
    good = content_digest(clean.encode())
    forged = []
    for rel, record in records(pack):
        header, _, payload = record.partition(b"\n")
        parts = header.split(b" ")
        if rel == "pkg/sub.py":
            assert parts[1] == good.encode()
            parts[1] = bad.encode()
        forged.append((rel, b" ".join(parts) + b"\n" + payload))
    write_pack(pack, forged)
    # used where it is (the forgery works on a cache only its owner could write) ...
    rc, fs = check(repo.path, ["pkg/sub.py"], capsys)
    assert fs == []
    # ... not from the checkout, committed or not
    committed = repo.path / ".pt2bot-cache" / os.path.relpath(pack, default_dir(repo))
    committed.parent.mkdir(parents=True)
    committed.write_bytes(open(pack, "rb").read())
    os.unlink(pack)
    rc, fs = check(repo.path, ["pkg/sub.py"], capsys)
    assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101")} and rc == 1
    repo.git("add", "-f", ".pt2bot-cache")
    repo.git("commit", "-q", "-m", "cache")
    rc, fs = check(repo.path, ["pkg/sub.py"], capsys)
    assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101")} and rc == 1


def test_concurrent_checks_share_one_cache(tmp_path):
    """Four checks at once on a cold cache: all right, no temp file left, the cache then whole."""
    import subprocess

    cache = tmp_path / "c"
    env = {**os.environ, "PT2BOT_CACHE_DIR": str(cache)}
    cmd = [sys.executable, "-m", "pt2bot", "check", "--select", "ALL", "--format", "json", "-j", "1", "."]
    procs = [subprocess.Popen(cmd, cwd=FIXTURES, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [1] * 4, outs[0][1].decode()[-2000:]
    first = json.loads(outs[0][0])["findings"]
    assert all(json.loads(o)["findings"] == first for o, _ in outs) and first
    assert not [p for p in entries(cache) if p.endswith(".tmp")]
    assert 1 <= len(packs(cache)) <= 4 and packs(cache) == entries(cache)
    out = subprocess.run(cmd, cwd=FIXTURES, env=env, capture_output=True, timeout=300)
    assert json.loads(out.stdout)["findings"] == first
    fs, s = run(FIXTURES, new_cache(cache, StaticConfig(select=("ALL",))), cfg=StaticConfig(select=("ALL",)))
    assert s.cached == s.files


def test_a_cold_check_writes_one_pack_a_one_file_change_one_small_pack(tmp_path):
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB,
                                "pkg/helpers.py": HELPERS, "pkg/caller.py": CALLER})
    cache = tmp_path / "c"
    _, s = run(repo.path, new_cache(cache))
    (first,) = entries(cache)
    # (pkg/__init__.py is empty: nothing needs it, it is never read)
    assert first.endswith(PACK_SUFFIX) and s.written == s.files - s.unread == len(records(first)) == 4
    repo.write("pkg/sub.py", textwrap.dedent(SUB).replace("n = x.sum().item()", "n = 1"))
    _, s = run(repo.path, new_cache(cache))
    assert s.written == 1
    (second,) = set(entries(cache)) - {first}
    assert [rel for rel, _ in records(second)] == ["pkg/sub.py"]
    assert os.path.getsize(second) < os.path.getsize(first) / 3
    _, s = run(repo.path, new_cache(cache))       # nothing changed: nothing written
    assert (s.cached, s.written) == (4, 0) and len(entries(cache)) == 2


def test_compaction_keeps_the_records_of_files_outside_the_run(tmp_path):
    """One-file runs add a pack each; the run that would make it MAX_PACKS + 1 merges them
    all into one, with the records of the files it did not open. (20 files: the superseded
    records of m0.py never outweigh the live ones.)"""
    src = tmp_path / "t"
    files = tree(src, 20)
    cache = tmp_path / "c"
    full, _ = run(src, new_cache(cache))
    assert len(full) == len(files)
    counts = []
    for i in range(MAX_PACKS + 2):
        (src / "m0.py").write_text(files["m0.py"] + f"# edit {i}\n")
        fs, s = run(src, new_cache(cache), paths=["m0.py"])
        assert (s.files, s.parsed, s.written) == (1, 1, 1) and len(fs) == 1
        counts.append(len(packs(cache)))
    assert counts == [2, 3, 4, 5, 6, 7, 8, 1, 2, 3]
    assert {rel for p in packs(cache) for rel, _ in records(p)} == set(files)
    fs, s = run(src, new_cache(cache))
    assert (s.cached, s.parsed, s.written) == (len(files), 0, 0) and fs == full


def test_mostly_superseded_packs_are_merged(tmp_path):
    """Every file changed twice: the third pack would hold all the live records and the first
    two only dead ones, so the run writes one merged pack instead."""
    src = tmp_path / "t"
    files = tree(src)
    cache = tmp_path / "c"
    run(src, new_cache(cache))
    for i, want in ((1, 2), (2, 1)):
        for rel, text in files.items():
            (src / rel).write_text(text + "".join(f"\ndef extra{k}():\n    pass\n" for k in range(i)))
        _, s = run(src, new_cache(cache))
        assert s.written == len(files) and len(packs(cache)) == want
    (merged,) = packs(cache)
    assert sorted(rel for rel, _ in records(merged)) == sorted(files)
    assert run(src, new_cache(cache))[1].cached == len(files)


def test_two_runs_merging_at_once_lose_nothing(tmp_path):
    """Two runs read the same MAX_PACKS packs, then both merge: the second finds its packs
    gone (no error), each keeps its own pack, and every answer stays right."""
    src = tmp_path / "t"
    files = tree(src, 20)
    cache = tmp_path / "c"
    run(src, new_cache(cache))
    for i in range(MAX_PACKS - 1):
        (src / "m0.py").write_text(files["m0.py"] + f"# edit {i}\n")
        run(src, new_cache(cache), paths=["m0.py"])
    a, b = new_cache(cache), new_cache(cache)
    assert a.read("m5.py") and b.read("m5.py")       # both have read the packs
    for c, rel in ((a, "m1.py"), (b, "m2.py")):
        (src / rel).write_text(files[rel] + "# changed\n")
        assert run(src, c, paths=[rel])[1].written == 1
    assert len(packs(cache)) == 2
    fs, s = run(src, new_cache(cache))
    assert fs == run(src, None)[0] and len(fs) == len(files)
    # b merged from what it had read: its stale m1.py record is newer than a's, so m1.py is a
    # miss (a digest mismatch, parsed again), and only that
    assert (s.parsed, s.cached) == (1, len(files) - 1)


def test_old_entry_directories_are_pruned(tmp_path):
    """Each pt2bot version (or edit of its code) writes a directory of its own; only the most
    recently used few are kept."""
    from pt2bot.static.cache import KEEP_KEYS

    cache = tmp_path / "c"
    for i in range(KEEP_KEYS + 2):
        old = cache / f"v0.0.{i}-0000"
        old.mkdir(parents=True)
        (old / "entry").write_text("x")
        os.utime(old, (1000 + i, 1000 + i))
    run(FIXTURES, new_cache(cache))
    left = sorted(p.name for p in cache.iterdir() if p.is_dir())
    assert len(left) == KEEP_KEYS and f"v0.0.{KEEP_KEYS + 1}-0000" in left and "v0.0.0-0000" not in left


def test_compile_sites_found_whatever_the_text_filter_skips(tmp_path):
    """pt2bot/static/files.py `may_compile` skips the compile-site scan of files whose only
    `compile` is `re.compile`; every spelling of a torch compile/export call is still seen."""
    from pt2bot.static.files import may_compile

    assert not may_compile(b"import re\nP = re.compile('x')\nclass A:\n    compiled = recompile = 1\n")
    for src in ("import torch\nf = torch.compile(g)\n", "from torch import compile as c\nf = c(g)\n",
                "import torch\nf = torch._dynamo.optimize('eager')(g)\n",
                "import torch\nf = torch._export.aot_compile(g, ())\n",
                "from torch.export import export\nep = export(m, ())\n",
                "import re\nimport torch\nP = re.compile('x')\nm = torch.compile(m)\n"):
        assert may_compile(src.encode()), src
    write_loop = {"m.py": """\
        import re
        import torch
        P = re.compile("x")

        def train(x, steps):
            for k in range(steps):
                step = torch.compile(lambda z: z * k + 1)
                x = step(x)
        """}
    for rel, text in write_loop.items():
        (tmp_path / rel).write_text(textwrap.dedent(text))
    fs, _ = run(tmp_path, None)
    assert {f["rule"] for f in fs} == {"PTC402"}


def test_a_warm_check_scans_only_the_files_that_changed(tmp_path, monkeypatch):
    """The text scans (pt2bot/static/scan.py) are cached by content; a forged or damaged
    scans file is a miss (the same findings), never trusted."""
    from pt2bot.static import files as static_files

    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB,
                                "pkg/helpers.py": HELPERS, "pkg/caller.py": CALLER, "pkg/conf.py": "X = 1\n"})
    scanned: list[int] = []
    real = static_files.scan_file
    monkeypatch.setattr(static_files, "scan_file", lambda d, c: scanned.append(len(d)) or real(d, c))
    cache = tmp_path / "c"
    good, _ = run(repo.path, new_cache(cache))
    assert len(scanned) == 6
    scanned.clear()
    repo.write("pkg/conf.py", "X = 2\n")
    fs, s = run(repo.path, new_cache(cache))
    assert fs == good and scanned == [6] and s.parsed == 0
    (path,) = [os.path.join(d, f) for d, _, fs_ in os.walk(cache) for f in fs_ if f == SCANS]
    for damage in (b"", b"garbage", open(path, "rb").read()[:-3]):
        with open(path, "wb") as fh:
            fh.write(damage)
        scanned.clear()
        fs, _ = run(repo.path, new_cache(cache))
        assert fs == good and len(scanned) == 6, damage[:20]


def test_a_forged_scans_file_cannot_run_code(tmp_path):
    """A scans file whose framing is whole (a branch could commit one) but whose pickle names
    anything other than a FileScan is a miss: the restricted unpickler never builds it."""
    import pickle

    from pt2bot.static.cache import content_digest

    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB})
    cache = tmp_path / "c"
    good, _ = run(repo.path, new_cache(cache))
    (path,) = [os.path.join(d, f) for d, _, fs_ in os.walk(cache) for f in fs_ if f == SCANS]
    marker = tmp_path / "pwned"

    class Attack:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    payload = pickle.dumps({"pkg/sub.py": ("x", Attack())}, protocol=pickle.HIGHEST_PROTOCOL)
    with open(path, "wb") as fh:
        fh.write(b" ".join((b"pt2bot-cache/1", b"scans", SCANS.encode().hex().encode(),
                            content_digest(payload).encode())) + b"\n" + payload)
    assert new_cache(cache).load_scans() == {}
    fs, _ = run(repo.path, new_cache(cache))
    assert fs == good and not marker.exists()


def test_the_cache_key_covers_every_module_that_shapes_a_record():
    # A record is the output of the engine, the rules and the driver's per-file stage: a
    # module of any of them missing from the key would let an old record outlive a change
    # to the code that made it.
    import pt2bot
    from pt2bot.static.cache import analysis_sources

    pkg = os.path.dirname(pt2bot.__file__)
    hashed = {os.path.relpath(p, pkg) for p in analysis_sources()}
    for sub in ("analysis", "rules", "static"):
        for name in os.listdir(os.path.join(pkg, sub)):
            if name.endswith(".py"):
                assert os.path.join(sub, name) in hashed
    assert "analysis/walk.py" in hashed and "static/files.py" in hashed
