from __future__ import annotations

import os
import random
import stat
import subprocess

import pytest
from gitrepo import GitRepo

from pt2bot.changes import (
    ChangeSet, annotate_findings, diff_changes, is_commentable, keep_finding, resolve_base,
    touches_change,
)
from pt2bot.errors import UserError
from pt2bot.findings import DIFF_ADDED, DIFF_CONTEXT, DIFF_FILE, DIFF_OUTSIDE, Finding


def numbered(prefix: str, n: int, eol: str = "\n") -> str:
    return "".join(f"{prefix}{i}{eol}" for i in range(1, n + 1))


def finding(path: str, line: int, diff: str | None = None) -> Finding:
    return Finding(rule="PTC101", path=path, line=line, col=0, severity="error",
                   message="m", diff=diff)


def pr(repo: GitRepo, base_files: dict[str, str | bytes],
       head_files: dict[str, str | bytes | None]) -> tuple[str, str]:
    """Commit base on main, then head on branch `pr`; None in head_files deletes a file."""
    for p, c in base_files.items():
        repo.write(p, c)
    base = repo.commit("base")
    repo.branch("pr")
    for p, c in head_files.items():
        if c is None:
            repo.rm(p)
        else:
            repo.write(p, c)
    return base, repo.commit("head")


# ---------------------------------------------------------------------------- diff parsing

def test_modified_file_lines_and_maps(git_repo: GitRepo) -> None:
    old = numbered("line", 20).splitlines(keepends=True)
    new = list(old)
    new[4] = "CHANGED5\n"        # line 5 modified
    new.insert(10, "INSERTED\n")  # new line 11
    del new[15]                  # old line 15 deleted
    base, head = pr(git_repo, {"a.py": "".join(old)}, {"a.py": "".join(new)})
    cs = diff_changes(git_repo.path, base, head)
    assert (cs.base, cs.head) == (base, head)
    fc = cs.files["a.py"]
    assert (fc.status, fc.old_path) == ("modified", "a.py")
    assert fc.added_lines == {5, 11}
    assert fc.deleted_lines == {5, 15}
    assert fc.context_lines == set(range(2, 19)) - {5, 11}
    assert not fc.added_lines & fc.context_lines
    assert [fc.map_old_to_new(o) for o in (1, 4, 5, 10, 11, 14, 15, 16, 20)] == \
        [1, 4, None, 10, 12, 15, None, 16, 20]
    assert [fc.map_new_to_old(n) for n in (1, 5, 10, 11, 12, 15, 16, 20)] == \
        [1, None, 10, None, 11, 14, 16, 20]


def test_a_rewritten_line_knows_which_columns_changed(git_repo: GitRepo) -> None:
    """The parts of a line the PR rewrote, in UTF-8 bytes (what the bytecode's positions and
    `ast` count): a review says an operand no call evaluated only where it holds a change."""
    old = "def f(s):\n    if has_ext and s.backend == 'é':\n        return 1\n    return 2\n"
    new = ("def f(s):\n    if has_ext and s.kernel == 'é':\n        return 1\n"
           "    return s.total()  # a line like no removed one\n")
    base, head = pr(git_repo, {"m.py": old}, {"m.py": new})
    fc = diff_changes(git_repo.path, base, head).files["m.py"]
    cols = dict(fc.changed_cols)
    line = new.splitlines()[1]
    at = line.index("kernel")    # backend -> kernel: the edits (a deletion is a point) inside it
    assert cols[2] and all(at <= a <= b <= at + len("kernel") for a, b in cols[2])
    assert 4 not in cols                      # rewritten throughout: new
    assert touches_change(fc, 2, line.index("s.kernel"), len(line.encode()) - 1)
    assert not touches_change(fc, 2, line.index("has_ext"), line.index("has_ext") + 7)
    assert touches_change(fc, 4, 0, 1) and not touches_change(fc, 3, 0, 99)


def test_inserting_lines_above_shifts_the_map_outside_hunks(git_repo: GitRepo) -> None:
    body = numbered("x", 40)
    base, head = pr(git_repo, {"m.py": body}, {"m.py": "import a\nimport b\n" + body})
    fc = diff_changes(git_repo.path, base, head).files["m.py"]
    assert fc.added_lines == {1, 2}
    assert fc.map_old_to_new(30) == 32   # far outside the only hunk
    assert fc.map_new_to_old(32) == 30
    assert fc.map_old_to_new(1) == 3     # a context line of the hunk


def test_moved_code_is_deleted_and_added(git_repo: GitRepo) -> None:
    func = "def moved():\n    return 1\n"
    rest = numbered("r", 20)
    base, head = pr(git_repo, {"m.py": func + rest}, {"m.py": rest + func})
    fc = diff_changes(git_repo.path, base, head).files["m.py"]
    assert fc.deleted_lines == {1, 2}
    assert fc.added_lines == {21, 22}
    assert fc.map_old_to_new(1) is None
    assert fc.map_old_to_new(13) == 11   # unchanged code moved up by two lines
    assert fc.map_new_to_old(22) is None


def test_rename_without_edits(git_repo: GitRepo) -> None:
    git_repo.write("old/name.py", numbered("n", 30))
    base = git_repo.commit("base")
    git_repo.mv("old/name.py", "new/name.py")
    head = git_repo.commit("rename")
    cs = diff_changes(git_repo.path, base, head)
    assert set(cs.files) == {"new/name.py"}
    fc = cs.files["new/name.py"]
    assert (fc.status, fc.old_path, fc.similarity) == ("renamed", "old/name.py", 100)
    assert not fc.added_lines and not fc.deleted_lines and not fc.hunks
    assert fc.map_old_to_new(17) == 17
    assert cs.paths() == {"old/name.py", "new/name.py"}
    assert cs.by_old_path("old/name.py") is fc


def test_rename_with_edits(git_repo: GitRepo) -> None:
    git_repo.write("a.py", numbered("n", 30))
    base = git_repo.commit("base")
    git_repo.mv("a.py", "b.py")
    git_repo.write("b.py", numbered("n", 30).replace("n7\n", "N7\n"))
    head = git_repo.commit("rename+edit")
    fc = diff_changes(git_repo.path, base, head).files["b.py"]
    assert (fc.status, fc.old_path) == ("renamed", "a.py")
    assert fc.similarity is not None and 50 <= fc.similarity < 100
    assert fc.added_lines == {7} and fc.deleted_lines == {7}


def test_deleted_file_is_keyed_by_old_path(git_repo: GitRepo) -> None:
    base, head = pr(git_repo, {"gone.py": "a\nb\nc\n", "keep.py": "k\n"}, {"gone.py": None})
    cs = diff_changes(git_repo.path, base, head)
    assert set(cs.files) == {"gone.py"}
    fc = cs.files["gone.py"]
    assert (fc.status, fc.old_path, fc.new_mode) == ("deleted", "gone.py", None)
    assert fc.deleted_lines == {1, 2, 3} and not fc.added_lines
    assert fc.map_old_to_new(2) is None
    assert not is_commentable(cs, "gone.py", 1)
    assert annotate_findings([finding("gone.py", 1)], cs)[0].diff == DIFF_OUTSIDE


def test_binary_files_added_modified_deleted(git_repo: GitRepo) -> None:
    base, head = pr(git_repo, {"w.bin": b"\x00\x01" * 50, "old.bin": b"\x00" * 9},
                    {"w.bin": b"\x00\x02" * 50, "new.bin": b"\x00\xff", "old.bin": None})
    cs = diff_changes(git_repo.path, base, head)
    assert {p: (fc.status, fc.binary) for p, fc in cs.files.items()} == {
        "w.bin": ("binary", True), "new.bin": ("binary", True), "old.bin": ("deleted", True)}
    w = cs.files["w.bin"]
    assert not w.added_lines and not w.hunks and w.map_old_to_new(1) is None
    assert not is_commentable(cs, "w.bin", 1)
    assert annotate_findings([finding("w.bin", 1)], cs)[0].diff == DIFF_FILE


def test_crlf_file_counts_lines_like_git(git_repo: GitRepo) -> None:
    old = numbered("c", 8, eol="\r\n")
    base, head = pr(git_repo, {"crlf.py": old}, {"crlf.py": old.replace("c3\r\n", "C3\r\n")})
    fc = diff_changes(git_repo.path, base, head).files["crlf.py"]
    assert fc.added_lines == {3} and fc.deleted_lines == {3}
    assert fc.context_lines == {1, 2, 4, 5, 6}


def test_form_feed_and_unicode_separators_do_not_split_lines(git_repo: GitRepo) -> None:
    # str.splitlines() would break these lines in two and shift every number after them.
    old = "a = 1\x0c\nb = '\u2028'\nc = 3\nd = 4\n"
    base, head = pr(git_repo, {"ff.py": old}, {"ff.py": old.replace("d = 4", "d = 5")})
    fc = diff_changes(git_repo.path, base, head).files["ff.py"]
    assert fc.added_lines == {4} and fc.context_lines == {1, 2, 3}


def test_no_trailing_newline(git_repo: GitRepo) -> None:
    base, head = pr(git_repo, {"a.py": "x = 1\ny = 2", "b.py": "p\nq"},
                    {"a.py": "x = 1\ny = 2\nz = 3", "b.py": "P\nq"})
    cs = diff_changes(git_repo.path, base, head)
    a = cs.files["a.py"]
    assert a.added_lines == {2, 3} and a.deleted_lines == {2}   # y = 2 gained its newline
    b = cs.files["b.py"]
    assert b.added_lines == {1} and b.context_lines == {2}
    assert b.map_old_to_new(2) == 2


@pytest.mark.parametrize("path", [
    "dir with space/file name.py",
    "ünïcødé/数据.py",
    'quote"and\\back.py',
    "tab\there.py",
    "a b/c b/d.py",   # ' b/' inside a name is what defeats `diff --git a/X b/X` parsing
])
def test_odd_paths_keep_their_exact_names(git_repo: GitRepo, path: str) -> None:
    base, head = pr(git_repo, {path: "one\ntwo\n"}, {path: "one\nTWO\n"})
    cs = diff_changes(git_repo.path, base, head)
    assert set(cs.files) == {path}
    assert cs.files[path].added_lines == {2}
    assert is_commentable(cs, path, 2)


def test_mode_only_change(git_repo: GitRepo) -> None:
    git_repo.write("run.sh", "echo hi\n")
    base = git_repo.commit("base")
    p = git_repo.path / "run.sh"
    os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)
    head = git_repo.commit("chmod")
    fc = diff_changes(git_repo.path, base, head).files["run.sh"]
    assert fc.status == "modified" and fc.mode_changed
    assert (fc.old_mode, fc.new_mode) == ("100644", "100755")
    assert not fc.added_lines and not fc.hunks
    assert fc.map_old_to_new(1) == 1


def test_added_file_is_all_added(git_repo: GitRepo) -> None:
    base, head = pr(git_repo, {"keep.py": "k\n"}, {"pkg/new.py": numbered("n", 4)})
    fc = diff_changes(git_repo.path, base, head).files["pkg/new.py"]
    assert (fc.status, fc.old_path) == ("added", None)
    assert fc.added_lines == {1, 2, 3, 4}
    assert fc.map_new_to_old(2) is None


def test_working_tree_includes_staged_unstaged_and_untracked(git_repo: GitRepo) -> None:
    git_repo.write(".gitignore", "*.log\n")
    git_repo.write("a.py", numbered("a", 5))
    git_repo.write("s.py", numbered("s", 5))
    base = git_repo.commit("base")
    git_repo.write("a.py", numbered("a", 5).replace("a2\n", "A2\n"))       # unstaged
    git_repo.write("s.py", numbered("s", 6))
    git_repo.git("add", "s.py")                                            # staged
    git_repo.write("new one.py", "u1\nu2\nu3")                              # untracked
    git_repo.write("blob.bin", b"\x00abc")                                  # untracked binary
    git_repo.write("noise.log", "ignored\n")                                # ignored
    cs = diff_changes(git_repo.path, base)
    assert cs.head is None
    assert set(cs.files) == {"a.py", "s.py", "new one.py", "blob.bin"}
    assert cs.files["a.py"].added_lines == {2}
    assert cs.files["s.py"].added_lines == {6}
    u = cs.files["new one.py"]
    assert (u.status, u.added_lines) == ("added", frozenset({1, 2, 3}))
    assert is_commentable(cs, "new one.py", 3)
    assert (cs.files["blob.bin"].status, cs.files["blob.bin"].binary) == ("binary", True)
    # The same base against the committed HEAD sees none of it.
    assert diff_changes(git_repo.path, base, "HEAD").files == {}


def test_working_tree_leaves_out_what_installing_the_project_writes(git_repo: GitRepo) -> None:
    """`pip install -e .` (the workflow's install step) writes `<name>.egg-info/` into the
    checkout and running the code writes `__pycache__/`; where .gitignore does not name them
    they are untracked, but no pull request wrote them, so they are not changes."""
    git_repo.write("pkg/m.py", "x = 1\n")
    base = git_repo.commit("base")
    git_repo.write("my_pkg.egg-info/PKG-INFO", "Metadata-Version: 2.1\nName: my-pkg\n")
    git_repo.write("my_pkg.egg-info/SOURCES.txt", "pkg/m.py\n")
    git_repo.write("src/other.egg-info/top_level.txt", "other\n")
    git_repo.write("pkg/__pycache__/m.cpython-311.pyc", b"\x00\x01")
    git_repo.write("pkg/stray.pyc", b"\x00\x01")
    git_repo.write(".eggs/README.txt", "eggs\n")
    git_repo.write("pkg/new.py", "y = 2\n")                                # the user's new file
    git_repo.write("notes.egg-info", "a file, not the folder setuptools writes\n")
    cs = diff_changes(git_repo.path, base)
    assert set(cs.files) == {"pkg/new.py", "notes.egg-info"}
    # A tracked file under such a name is the project's own and stays a change.
    git_repo.git("add", "-f", "my_pkg.egg-info/PKG-INFO")
    assert "my_pkg.egg-info/PKG-INFO" in diff_changes(git_repo.path, base).files


def test_a_review_whose_out_dir_is_in_the_checkout_does_not_count_its_own_report(
        git_repo: GitRepo, monkeypatch) -> None:
    """`pt2bot review --out report` from the repository's root writes the report into the
    checkout; untracked, its files were the next review's changed files (a new user's second
    run said 12 changed files where the pull request changed 3). What pt2bot writes is left
    out; the user's own untracked files, and a folder that only starts with the same name,
    stay changes."""
    from pt2bot.pipeline import ReviewOptions, review

    git_repo.write("pt2bot.yml", "version: 1\nmodels: []\n")
    git_repo.write("pkg/m.py", "x = 1\n")
    base = git_repo.commit("base")
    git_repo.write("pkg/new.py", "y = 2\n")
    git_repo.write("report-notes/todo.txt", "the user's\n")
    monkeypatch.chdir(git_repo.path)
    said: list[str] = []
    for _ in range(2):
        review(ReviewOptions(base=base, out_dir="report", smoke=False), log=said.append)
    counts = [line for line in said if "changed file(s)" in line]
    assert len(counts) == 2 and all(line.endswith(" + working tree (2 uncommitted file(s)): 2 changed file(s)")
                                    for line in counts), said
    assert (git_repo.path / "report" / "report.json").is_file()
    cs = diff_changes(git_repo.path, base, own_output=[git_repo.path / "report"])
    assert set(cs.files) == {"pkg/new.py", "report-notes/todo.txt"}
    # a later review with another --out: the earlier report is pt2bot's too (a new user's
    # second PR read "16 uncommitted file(s)"), whatever folder it is in
    said.clear()
    review(ReviewOptions(base=base, out_dir="report-2", smoke=False), log=said.append)
    assert any(line.endswith(" + working tree (2 uncommitted file(s)): 2 changed file(s)")
               for line in said), said
    assert set(diff_changes(git_repo.path, base).files) == {"pkg/new.py", "report-notes/todo.txt"}
    # a report.json of the user's own is a change like any file
    git_repo.write("data/report.json", '{"schema": "my.report/1"}\n')
    assert "data/report.json" in diff_changes(git_repo.path, base).files
    # what `pt2bot init --force` kept of the config it replaced is pt2bot's too (a new user's
    # every review read "+ working tree (1 uncommitted file(s))" for it); one elsewhere is not
    git_repo.write("pt2bot.yml.bak", "version: 1\nmodels: []\n")
    git_repo.write("configs/pt2bot.yml.bak", "version: 1\nmodels: []\n")
    files = set(diff_changes(git_repo.path, base).files)
    assert "pt2bot.yml.bak" not in files and "configs/pt2bot.yml.bak" in files


def test_a_clean_checkout_is_not_said_to_have_a_working_tree_of_its_own(git_repo: GitRepo,
                                                                      monkeypatch) -> None:
    """A new user's review of a committed branch read "head ... + working tree: 1 changed
    file(s)", as if edits were pending."""
    from pt2bot.pipeline import ReviewOptions, review

    git_repo.write("pt2bot.yml", "version: 1\nmodels: []\n")
    git_repo.write("pkg/m.py", "x = 1\n")
    base = git_repo.commit("base")
    git_repo.write("pkg/m.py", "x = 2\n")
    git_repo.commit("pr")
    monkeypatch.chdir(git_repo.path)
    said: list[str] = []
    review(ReviewOptions(base=base, out_dir=str(git_repo.path / "out"), smoke=False), log=said.append)
    [line] = [x for x in said if "changed file(s)" in x]
    assert "working tree" not in line and line.endswith(": 1 changed file(s)"), line


def test_unknown_refs_are_user_errors(git_repo: GitRepo) -> None:
    git_repo.commit("c")
    with pytest.raises(UserError, match="unknown base"):
        diff_changes(git_repo.path, "nope")
    with pytest.raises(UserError, match="unknown head ref 'nope'"):
        diff_changes(git_repo.path, "HEAD", "nope")


def test_line_maps_agree_with_file_contents_on_random_edits(git_repo: GitRepo) -> None:
    """Property: a mapped line has the same text on both sides; the maps invert each other."""
    rng = random.Random(4)
    counter = iter(range(10**6))
    lines = [f"l{next(counter)}\n" for _ in range(60)]
    git_repo.write("f.py", "".join(lines))
    prev = git_repo.commit("start")
    for _ in range(12):
        new = list(lines)
        for _ in range(rng.randint(1, 6)):
            op, i = rng.choice("ida"), rng.randrange(len(new) + 1)
            if op == "i" or not new:
                new[i:i] = [f"l{next(counter)}\n" for _ in range(rng.randint(1, 4))]
            elif op == "d":
                del new[min(i, len(new) - 1):min(i, len(new) - 1) + rng.randint(1, 3)]
            else:
                new[min(i, len(new) - 1)] = f"l{next(counter)}\n"
        git_repo.write("f.py", "".join(new))
        head = git_repo.commit("edit")
        fc = diff_changes(git_repo.path, prev, head).files["f.py"]
        for o in range(1, len(lines) + 1):
            n = fc.map_old_to_new(o)
            if n is None:
                assert o in fc.deleted_lines
            else:
                assert new[n - 1] == lines[o - 1] and fc.map_new_to_old(n) == o
        for n in range(1, len(new) + 1):
            if fc.map_new_to_old(n) is None:
                assert n in fc.added_lines
        assert len(fc.added_lines) == len(set(new) - set(lines))
        lines, prev = new, head


# ---------------------------------------------------------------------------- base

def _diverged(repo: GitRepo) -> tuple[str, str]:
    repo.write("a.py", "1\n")
    fork = repo.commit("fork point")
    repo.branch("feature")
    repo.write("b.py", "2\n")
    repo.commit("feature work")
    repo.checkout("main")
    repo.write("c.py", "3\n")
    repo.commit("main moves on")
    repo.checkout("feature")
    return fork, repo.head()


def test_resolve_base_is_the_merge_base(git_repo: GitRepo) -> None:
    fork, head = _diverged(git_repo)
    assert resolve_base(git_repo.path, "main") == fork
    assert resolve_base(git_repo.path, "main", "feature") == fork
    assert resolve_base(git_repo.path, "main", "main") == git_repo.git("rev-parse", "main").strip()
    # main's own commit after the fork is not part of the PR's diff
    assert set(diff_changes(git_repo.path, fork, head).files) == {"b.py"}


def test_resolve_base_unknown_refs(git_repo: GitRepo) -> None:
    _diverged(git_repo)
    with pytest.raises(UserError, match="unknown base ref 'nope'"):
        resolve_base(git_repo.path, "nope")
    with pytest.raises(UserError, match="unknown head ref 'nope'"):
        resolve_base(git_repo.path, "main", "nope")


def test_resolve_base_falls_back_to_the_remote_branch(git_repo: GitRepo, tmp_path) -> None:
    fork, _ = _diverged(git_repo)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--branch", "feature", str(git_repo.path), str(clone)],
                   check=True, capture_output=True)
    # Only `origin/main` exists in the clone, as in a CI checkout of a PR.
    assert resolve_base(clone, "main") == fork


def test_shallow_clone_without_base_says_fetch_depth_0(git_repo: GitRepo, tmp_path) -> None:
    _diverged(git_repo)
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--single-branch", "--branch", "feature",
                    f"file://{git_repo.path}", str(clone)], check=True, capture_output=True)
    with pytest.raises(UserError, match="fetch-depth: 0"):
        resolve_base(clone, "main")
    # Base fetched but history still cut: no merge-base to be found.
    subprocess.run(["git", "-C", str(clone), "fetch", "-q", "--depth", "1", "origin", "main:main"],
                   check=True, capture_output=True)
    with pytest.raises(UserError, match="fetch-depth: 0"):
        resolve_base(clone, "main")


def test_unrelated_histories(git_repo: GitRepo) -> None:
    git_repo.write("a.py", "1\n")
    git_repo.commit("main")
    git_repo.git("checkout", "-q", "--orphan", "other")
    git_repo.write("z.py", "z\n")
    git_repo.commit("other root")
    with pytest.raises(UserError, match="no common ancestor"):
        resolve_base(git_repo.path, "main")


# ---------------------------------------------------------------------------- findings

def test_annotate_and_filter_findings(git_repo: GitRepo) -> None:
    base, head = pr(git_repo, {"a.py": numbered("a", 30), "other.py": "o\n"},
                    {"a.py": numbered("a", 30).replace("a10\n", "A10\n")})
    cs = diff_changes(git_repo.path, base, head)
    fs = [finding("a.py", 10), finding("a.py", 12), finding("a.py", 25),
          finding("other.py", 1), finding("b.py", 3)]
    annotated = annotate_findings(fs, cs)
    assert [f.diff for f in annotated] == [DIFF_ADDED, DIFF_CONTEXT, DIFF_FILE, DIFF_OUTSIDE,
                                            DIFF_OUTSIDE]
    assert [f.with_(diff=None) for f in annotated] == fs   # nothing else touched, none dropped
    kept = {flt: [f.line for f in annotated if keep_finding(f, flt)]
            for flt in ("added", "diff_context", "file", "nofilter")}
    assert kept == {"added": [10], "diff_context": [10, 12], "file": [10, 12, 25],
                    "nofilter": [10, 12, 25, 1, 3]}
    assert keep_finding(finding("x.py", 1, diff=None), "added")  # not compared with a diff
    with pytest.raises(UserError, match="unknown filter"):
        keep_finding(annotated[0], "everything")


def test_is_commentable_only_inside_hunks(git_repo: GitRepo) -> None:
    base, head = pr(git_repo, {"a.py": numbered("a", 30)},
                    {"a.py": numbered("a", 30).replace("a10\n", "A10\n")})
    cs = diff_changes(git_repo.path, base, head)
    assert [n for n in range(1, 31) if is_commentable(cs, "a.py", n)] == list(range(7, 14))
    assert not is_commentable(cs, "unchanged.py", 1)
    assert not is_commentable(ChangeSet(base=base, head=head), "a.py", 10)


def test_type_change_file_to_symlink(git_repo: GitRepo) -> None:
    git_repo.write("target.py", "t\n")
    git_repo.write("link name.py", "was a file\nline 2\n")
    base = git_repo.commit("base")
    os.remove(git_repo.path / "link name.py")
    os.symlink("target.py", git_repo.path / "link name.py")
    head = git_repo.commit("now a symlink")
    cs = diff_changes(git_repo.path, base, head)
    fc = cs.files["link name.py"]
    assert (fc.status, fc.old_mode, fc.new_mode) == ("modified", "100644", "120000")
    assert fc.deleted_lines == {1, 2} and fc.added_lines == {1}
    assert fc.map_old_to_new(1) is None and fc.map_new_to_old(1) is None


def test_file_by_file_fallback_agrees_with_the_paired_parse(git_repo: GitRepo, monkeypatch) -> None:
    base, head = pr(git_repo,
                    {"a b.py": numbered("a", 30), "gone.py": "g\n", "r.py": numbered("r", 20),
                     "bin.dat": b"\x00\x01", "ü.py": "1\n2\n"},
                    {"a b.py": numbered("a", 30).replace("a9\n", "A9\n"), "gone.py": None,
                     "bin.dat": b"\x00\x02", "ü.py": "1\n2\n3", "new.py": "n\n"})
    git_repo.mv("r.py", "moved r.py")
    git_repo.write("moved r.py", numbered("r", 20).replace("r3\n", "R3\n"))
    head = git_repo.commit("rename too")
    paired = diff_changes(git_repo.path, base, head)
    import pt2bot.changes as changes_mod
    monkeypatch.setattr(changes_mod, "_pair_patches", lambda raw, patches: None)
    assert diff_changes(git_repo.path, base, head) == paired
    assert set(paired.files) == {"a b.py", "gone.py", "moved r.py", "bin.dat", "ü.py", "new.py"}


def test_large_untracked_file_is_counted_across_read_chunks(git_repo: GitRepo) -> None:
    base = git_repo.commit("base")
    git_repo.write("big.txt", "x" * 99 + "\n" + ("y" * 1023 + "\n") * 1500 + "tail")  # > 1 MiB
    fc = diff_changes(git_repo.path, base).files["big.txt"]
    assert fc.status == "added" and max(fc.added_lines) == 1502 and len(fc.added_lines) == 1502
