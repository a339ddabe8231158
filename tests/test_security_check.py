"""Attacks on `pt2bot check` and `pt2bot init` through the tree they read.

Where pt2bot is the only static gate (`check` in CI or pre-commit, `review --no-smoke`, a
maintainer checking a downloaded archive), the tree is the attacker's: it must not be able to
hide its own findings, make pt2bot read files outside it, or crash it.

- The per-file cache (pt2bot/static/cache.py) lives outside the checkout, so packs that come
  with the tree (a committed `.pt2bot-cache/`, in a tree without `.git`, or spelled
  `.PT2BOT-CACHE/` on a case-insensitive file system) are never read.
- Symlinks and special files in the tree (pt2bot/static/discover.py, `read_source` in
  pt2bot/static/files.py, the config loader) are not followed out of the root nor read when
  they are not regular files: a located warning, and the rest goes on.
- Deeply nested source ends in a located note in `init` as it does in `check`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pt2bot.cli import main
from pt2bot.static import cache as cache_mod
from pt2bot.static.cache import PACK_SUFFIX, content_digest, pack_bytes, pack_records
from tests.gitrepo import GitRepo
from tests.test_check_context import BASE, SUB   # the two-file tree with one `.item()`

CLEAN = SUB.replace("n = x.sum().item()", "n = 1")
FILES = {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB}
ROOT = Path(__file__).resolve().parents[1]


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def check(cwd, args, capsys, env=None) -> tuple[int, list[dict], str]:
    """`pt2bot check --format json ARGS` in `cwd`, in process: (exit code, findings, stderr)."""
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
    out = capsys.readouterr()
    return rc, json.loads(out.out)["findings"], out.err


def rules_at(findings) -> set[tuple[str, int, str]]:
    return {(f["path"], f["line"], f["rule"]) for f in findings}


def run_pt2bot(argv: list[str], cwd: Path, tmp_path: Path, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """pt2bot in a child process with 4 GiB of address space: an endless read ends in a
    MemoryError instead of filling the machine, a blocking one in the timeout."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop("PT2BOT_CACHE_DIR", None)
    try:
        return subprocess.run([sys.executable, "-m", "pt2bot", *argv], capture_output=True, text=True,
                              timeout=timeout, cwd=cwd, env=env, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        pytest.fail(f"pt2bot {' '.join(argv)} did not answer within {timeout} s")


# ------------------------------------------------------------------------------------------
# the cache: forged packs that come with the tree


def forged_pack(tmp_path: Path, capsys) -> tuple[str, bytes]:
    """(key directory name, pack bytes): the records of a clean `pkg/sub.py`, relabelled with
    the digest of the real one (which has a finding), as a branch would commit them. The
    checksum is unkeyed: anyone can recompute it, so the pack is well formed."""
    scratch = write_tree(tmp_path / "scratch", {**FILES, "pkg/sub.py": CLEAN})
    made = tmp_path / "made"
    rc, fs, _ = check(scratch, ["pkg/"], capsys, env={"PT2BOT_CACHE_DIR": str(made)})
    assert fs == [] and rc == 0
    (key,) = [d for d in os.listdir(made) if d.startswith("v")]
    (pack,) = [p for p in os.listdir(made / key) if p.endswith(PACK_SUFFIX)]
    bad = content_digest(textwrap.dedent(SUB).encode()).encode()
    forged = []
    for rel, record in pack_records((made / key / pack).read_bytes()):
        header, _, payload = record.partition(b"\n")
        parts = header.split(b" ")
        if rel == "pkg/sub.py":
            parts[1] = bad
        forged.append((rel, b" ".join(parts) + b"\n" + payload))
    data = pack_bytes(forged)
    # The forgery itself works: a cache directory holding it hides the finding. The defence
    # is that no such directory can come with the tree.
    owned = tmp_path / "owned"
    (owned / key).mkdir(parents=True)
    (owned / key / "0-forged.pack").write_bytes(data)
    rc, fs, _ = check(write_tree(tmp_path / "probe", FILES), ["pkg/"], capsys,
                      env={"PT2BOT_CACHE_DIR": str(owned)})
    assert fs == [], "the forged pack should hide the finding where it is trusted"
    return key, data


def test_a_forged_pack_in_a_tree_without_git_hides_nothing(tmp_path, capsys):
    """An sdist, a `git archive`, a downloaded zip: no `.git`, so no way to ask git whether
    `.pt2bot-cache/` was committed. The tree's packs must not be read at all."""
    key, data = forged_pack(tmp_path, capsys)
    tree = write_tree(tmp_path / "archive", FILES)
    assert not any((p / ".git").exists() for p in [tree, *tree.parents])
    (tree / ".pt2bot-cache" / key).mkdir(parents=True)
    (tree / ".pt2bot-cache" / key / "0-forged.pack").write_bytes(data)
    rc, fs, _ = check(tree, ["pkg/"], capsys)
    assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101")} and rc == 1


def test_a_committed_upper_case_cache_is_never_read(tmp_path, capsys):
    """On a case-insensitive file system (macOS, Windows) a committed `.PT2BOT-CACHE/` is what
    the path `.pt2bot-cache` opens, while `git ls-files -- .pt2bot-cache` (case-sensitive)
    says nothing is tracked there. A case-sensitive test machine cannot mount one, so the
    file system's folding is played by an untracked symlink `.pt2bot-cache -> .PT2BOT-CACHE`:
    the defence must not depend on how names compare."""
    key, data = forged_pack(tmp_path, capsys)
    repo = GitRepo.init(tmp_path / "repo")
    write_tree(repo.path, FILES)
    (repo.path / ".PT2BOT-CACHE" / key).mkdir(parents=True)
    (repo.path / ".PT2BOT-CACHE" / key / "0-forged.pack").write_bytes(data)
    repo.commit("a PR that ships its own cache")
    os.symlink(".PT2BOT-CACHE", repo.path / ".pt2bot-cache")
    assert repo.git("ls-files", "--", ".pt2bot-cache") == ""
    rc, fs, _ = check(repo.path, ["pkg/sub.py"], capsys)
    assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101")} and rc == 1


def test_the_cache_lives_in_the_user_cache_directory(tmp_path, capsys, monkeypatch):
    """By default the cache is `$XDG_CACHE_HOME/pt2bot/check/<name>-<hash of the root>`: nothing
    is written into the checkout, two checkouts do not share one, the same one is warm."""
    monkeypatch.setattr(cache_mod, "user_cache_dir", ORIGINAL_USER_CACHE_DIR)
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    monkeypatch.delenv("PT2BOT_CACHE_DIR", raising=False)
    a = GitRepo.init(tmp_path / "a")
    write_tree(a.path, FILES)
    a.commit("a")
    b = write_tree(tmp_path / "b", FILES)
    for tree in (a.path, b):
        rc, fs, _ = check(tree, ["pkg/"], capsys)
        assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101")}
        assert not (tree / ".pt2bot-cache").exists()
    assert a.git("status", "--porcelain", "--untracked-files=all") == ""
    dirs = sorted(os.listdir(xdg / "pt2bot" / "check"))
    assert len(dirs) == 2 and dirs[0].startswith("a-") and dirs[1].startswith("b-")
    where, why = cache_mod.resolve_cache_dir(str(a.path))
    assert where == str(xdg / "pt2bot" / "check" / dirs[0]) and why == "default"
    assert [f for _, _, fs in os.walk(where) for f in fs if f.endswith(PACK_SUFFIX)]   # its packs
    rc, fs, _ = check(a.path, ["pkg/"], capsys)
    assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101")}


@pytest.mark.parametrize("inside", [".pt2bot-cache", "pkg/.c", "."])
def test_a_cache_directory_inside_the_tree_is_not_used(tmp_path, capsys, inside):
    """`PT2BOT_CACHE_DIR` pointed into the checkout (as a CI config caching `.pt2bot-cache`
    with actions/cache might do) would read what a branch committed there: refused, with a
    warning, and the check runs without a cache."""
    key, data = forged_pack(tmp_path, capsys)
    tree = write_tree(tmp_path / "archive", FILES)
    target = (tree / inside).resolve()
    (target / key).mkdir(parents=True, exist_ok=True)
    (target / key / "0-forged.pack").write_bytes(data)
    rc, fs, err = check(tree, ["pkg/"], capsys, env={"PT2BOT_CACHE_DIR": inside})
    assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101")} and rc == 1
    assert "pt2bot: warning: no cache: " in err and "inside the checked tree" in err


# ------------------------------------------------------------------------------------------
# symlinks and special files in the tree

SECRET_MODEL = """\
    import torch.nn as nn

    class Secret(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            n = x.sum().item()  # SECRET-TOKEN-hunter2
            return self.proj(x) + n
    """


def hostile_tree(tmp_path: Path) -> Path:
    """A tree with a symlink to a model outside it, one to /dev/zero, a FIFO, and one honest
    model with a finding; and a symlink to its own model (inside: still read)."""
    outside = write_tree(tmp_path / "outside", {"secret.py": SECRET_MODEL})
    tree = write_tree(tmp_path / "tree", FILES)
    os.symlink(outside / "secret.py", tree / "pkg" / "leak.py")
    os.symlink("/dev/zero", tree / "pkg" / "zero.py")
    os.mkfifo(tree / "pkg" / "fifo.py")
    os.symlink(outside, tree / "pkg" / "outdir")           # a directory: never walked into
    os.symlink("sub.py", tree / "pkg" / "alias.py")
    return tree


def test_check_reads_no_symlink_out_of_the_tree_nor_special_files(tmp_path):
    tree = hostile_tree(tmp_path)
    proc = run_pt2bot(["check", "--no-cache", "--format", "json", "."], tree, tmp_path)
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 1, proc.stderr[-3000:]
    found = rules_at(json.loads(proc.stdout)["findings"])
    assert found == {("pkg/sub.py", 5, "PTC101"), ("pkg/alias.py", 5, "PTC101")}
    assert "hunter2" not in proc.stdout + proc.stderr
    warnings = sorted(line for line in proc.stderr.splitlines() if line.startswith("pt2bot: warning: "))
    assert warnings == [
        "pt2bot: warning: pkg/fifo.py: not a regular file (a FIFO): not read",
        "pt2bot: warning: pkg/leak.py: a symlink out of the checked root: not read",
        "pt2bot: warning: pkg/zero.py: a symlink out of the checked root: not read"]


def test_check_of_named_files_refuses_the_same(tmp_path):
    """Pre-commit's way: the files named on the command line."""
    tree = hostile_tree(tmp_path)
    proc = run_pt2bot(["check", "--no-cache", "--format", "json", "pkg/leak.py", "pkg/zero.py",
                       "pkg/fifo.py", "pkg/base.py", "pkg/sub.py"], tree, tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert rules_at(json.loads(proc.stdout)["findings"]) == {("pkg/sub.py", 5, "PTC101")}
    assert "hunter2" not in proc.stdout + proc.stderr
    assert proc.stderr.count("pt2bot: warning: ") == 3


def test_a_named_file_also_in_the_context_is_warned_about_once(tmp_path):
    """In a git repository the rest of the tree is read as context: the named symlink is
    found twice, said once."""
    tree = hostile_tree(tmp_path)
    GitRepo.init(tree)
    proc = run_pt2bot(["check", "--no-cache", "--format", "json", "pkg/leak.py", "pkg/sub.py"], tree, tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert rules_at(json.loads(proc.stdout)["findings"]) == {("pkg/sub.py", 5, "PTC101")}
    assert proc.stderr.count("pkg/leak.py: a symlink out of the checked root") == 1
    assert proc.stderr.count("pt2bot: warning: ") == 3       # leak, zero and the FIFO, from the context


def test_check_of_a_symlinked_directory_out_of_the_root(tmp_path):
    tree = hostile_tree(tmp_path)
    proc = run_pt2bot(["check", "--no-cache", "--format", "json", "pkg/outdir"], tree, tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["findings"] == [] and "hunter2" not in proc.stdout + proc.stderr
    assert "pt2bot: warning: pkg/outdir: a symlink out of the checked root: not read" in proc.stderr


def test_init_writes_no_class_from_outside_the_tree(tmp_path):
    tree = hostile_tree(tmp_path)
    proc = run_pt2bot(["init", "."], tree, tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    text = (tree / "pt2bot.yml").read_text()
    assert "Secret" not in text and "leak" not in text
    assert "pt2bot: warning: pkg/leak.py: a symlink out of the checked root: not read" in proc.stderr
    assert "pt2bot: warning: pkg/fifo.py: not a regular file (a FIFO): not read" in proc.stderr


def test_a_config_symlinked_out_of_the_repository_is_refused(tmp_path):
    """A branch's `pt2bot.yml -> /somewhere/else.yml`: the loader would quote that file's
    content in its messages (here: a YAML error naming the value)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "other.yml").write_text("SECRET-TOKEN-hunter2\n")
    repo = GitRepo.init(tmp_path / "repo")
    write_tree(repo.path, FILES)
    os.symlink(outside / "other.yml", repo.path / "pt2bot.yml")
    for argv, cwd in ((["check"], repo.path), (["check"], repo.path / "pkg"),
                      (["check", "--config", "pt2bot.yml"], repo.path)):
        if cwd != repo.path:
            os.symlink(outside / "other.yml", cwd / "pt2bot.yml")
        proc = run_pt2bot(argv, cwd, tmp_path)
        assert proc.returncode == 2, proc.stderr[-3000:]
        assert "hunter2" not in proc.stdout + proc.stderr
        assert proc.stderr in (f"pt2bot: error: {name}: a symlink out of the repository root {repo.path}: not read\n"
                               for name in ("pt2bot.yml", "./pt2bot.yml"))
    # inside the repository a symlink is fine (a shared config one directory up)
    (repo.path / "pt2bot.yml").unlink()
    (repo.path / "pt2bot.yml").write_text("version: 1\n")
    (repo.path / "pkg" / "pt2bot.yml").unlink()
    os.symlink("../pt2bot.yml", repo.path / "pkg" / "pt2bot.yml")
    proc = run_pt2bot(["check", "--no-cache"], repo.path / "pkg", tmp_path)
    assert proc.returncode in (0, 1) and proc.stderr == "", proc.stderr[-3000:]
    # and a file named outside the repository is the user's own choice
    proc = run_pt2bot(["check", "--no-cache", "--config", str(outside / "ok.yml")], repo.path, tmp_path)
    assert "outside the repository" not in proc.stderr


# ------------------------------------------------------------------------------------------
# deeply nested source

GOOD_MODEL = """\
    import torch.nn as nn

    class Good(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.proj = nn.Linear(dim, 2)

        def forward(self, x):
            return self.proj(x)
    """


def deep_tree(tmp_path: Path) -> Path:
    tree = write_tree(tmp_path / "tree", {"pkg/good.py": GOOD_MODEL})
    # the parser gives up: RecursionError for the sum, MemoryError for the minus signs
    (tree / "pkg" / "sum.py").write_text("x = " + "+".join(["1"] * 200_000) + "\n")
    (tree / "pkg" / "neg.py").write_text("x = " + "-" * 200_000 + "1\n")
    # parses, but nests deeper than a recursive walk over the AST can go
    deep = "+".join(["1"] * 2_500)
    (tree / "pkg" / "default.py").write_text(textwrap.dedent(GOOD_MODEL).replace("Good", "Deep").replace(
        "def __init__(self, dim)", f"def __init__(self, dim={deep})"))
    deep_x = "+".join(["x"] * 2_500)
    (tree / "pkg" / "body.py").write_text(textwrap.dedent(GOOD_MODEL).replace("Good", "Body").replace(
        "return self.proj(x)", f"n = x.item()\n        return self.proj(x) + {deep_x}"))
    return tree


def test_init_skips_deeply_nested_files_with_a_located_note(tmp_path):
    tree = deep_tree(tmp_path)
    proc = run_pt2bot(["init", "."], tree, tmp_path, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    text = (tree / "pt2bot.yml").read_text()
    assert "entry: pkg.good:Good" in text
    notes = sorted(line for line in proc.stderr.splitlines() if line.startswith("pt2bot: warning: "))
    assert notes == [
        "pt2bot: warning: pkg/default.py:3: class Deep skipped: cannot analyse: code too deeply nested",
        "pt2bot: warning: pkg/neg.py:1: skipped: cannot parse: expression too deeply nested",
        "pt2bot: warning: pkg/sum.py:1: skipped: cannot parse: expression too deeply nested"], proc.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_check_reports_code_too_deep_to_walk_as_ptc000(tmp_path, jobs):
    """A compiled function nested deeper than the walk can recurse: PTC000, not a traceback
    (here or in a worker process), and the other files are checked as usual."""
    tree = deep_tree(tmp_path)
    os.unlink(tree / "pkg" / "sum.py")       # (PTC000 too, but its source line is 400 kB)
    os.unlink(tree / "pkg" / "neg.py")
    proc = run_pt2bot(["check", "--no-cache", "--format", "json", "-j", jobs, "--select", "ALL", "."],
                      tree, tmp_path, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    found = {(f["path"], f["rule"], f["message"]) for f in json.loads(proc.stdout)["findings"]}
    assert ("pkg/body.py", "PTC000", "cannot analyse: code too deeply nested") in found
    assert not any(p == "pkg/good.py" for p, _, _ in found)



@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_helper_too_deep_to_walk_that_the_graph_reaches_later(tmp_path, jobs):
    """The graph reaches a helper that the first walks did not (another file's function):
    its walk goes too deep. PTC000 for that file, in this process or from a worker (with
    -j 2 the helper's file, which defines a module class, is opened in a worker up front);
    not cached, so a warm check says the same as the cold one."""
    deep = "+".join(["t"] * 2_500)
    tree = write_tree(tmp_path / "tree", {
        "pkg/__init__.py": "",
        "pkg/helpers.py": f"""\
            import torch.nn as nn

            class Unused(nn.Module):
                def forward(self, x):
                    return x

            def shrink(t):
                return t.tolist() + [{deep}]
            """,
        "pkg/caller.py": """\
            import torch.nn as nn
            from pkg.helpers import shrink

            class Net(nn.Module):
                def forward(self, x):
                    n = x.item()
                    return shrink(x) + n
            """})
    outs = []
    for args in (["--no-cache"], [], []):          # no cache, then cold, then warm
        proc = run_pt2bot(["check", *args, "--format", "json", "-j", jobs, "--select", "ALL", "."], tree,
                          tmp_path, timeout=120)
        assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
        outs.append({(f["path"], f["line"], f["rule"], f["message"]) for f in json.loads(proc.stdout)["findings"]})
    assert ("pkg/helpers.py", 1, "PTC000", "cannot analyse: code too deeply nested") in outs[0]
    assert any(p == "pkg/caller.py" and r == "PTC101" for p, _, r, _ in outs[0])
    assert outs[0] == outs[1] == outs[2]


ORIGINAL_USER_CACHE_DIR = getattr(cache_mod, "user_cache_dir", None)
