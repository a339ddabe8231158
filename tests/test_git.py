from __future__ import annotations

import os

import pytest
from gitrepo import GitRepo

from pt2bot import git
from pt2bot.errors import UserError


def test_no_git_env_strips_repo_selecting_variables() -> None:
    env = {"GIT_DIR": "/x", "GIT_INDEX_FILE": "/i", "GIT_WORK_TREE": "/w", "PATH": "/bin",
           "GIT_SSH_COMMAND": "ssh -i k", "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "c",
           "GIT_CONFIG_COUNT": "1"}
    assert git.no_git_env(env) == {"PATH": "/bin", "GIT_SSH_COMMAND": "ssh -i k",
                                   "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "c",
                                   "GIT_CONFIG_COUNT": "1"}


def test_leaked_git_dir_does_not_redirect_commands(tmp_path, monkeypatch) -> None:
    mine = GitRepo.init(tmp_path / "mine")
    mine.write("a.txt", "mine\n")
    mine_sha = mine.commit("mine")
    other = GitRepo.init(tmp_path / "other")
    other.write("b.txt", "other\n")
    other.commit("other")
    # What a surrounding hook leaves behind: without stripping, git would read `other`.
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other.path))
    assert git.head_sha(mine.path) == mine_sha
    assert git.show_file(mine.path, mine_sha, "a.txt") == b"mine\n"


def test_repo_root_from_subdirectory_and_outside(git_repo: GitRepo, tmp_path) -> None:
    git_repo.write("pkg/sub/m.py", "x = 1\n")
    git_repo.commit()
    assert os.path.samefile(git.repo_root(git_repo.path / "pkg" / "sub"), git_repo.path)
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    with pytest.raises(UserError, match="not inside a git work tree"):
        git.repo_root(outside)
    with pytest.raises(UserError, match="not a directory"):
        git.repo_root(tmp_path / "missing")


def test_head_sha_of_empty_repo_is_a_user_error(git_repo: GitRepo) -> None:
    with pytest.raises(UserError, match="no commit yet"):
        git.head_sha(git_repo.path)


def test_rev_parse_never_takes_a_ref_as_an_option(git_repo: GitRepo) -> None:
    sha = git_repo.commit("c")
    assert git.rev_parse(git_repo.path, "main") == sha
    assert git.rev_parse(git_repo.path, "--all") is None
    assert git.rev_parse(git_repo.path, "no-such-branch") is None


def test_show_file_exact_bytes_odd_names_and_absence(git_repo: GitRepo) -> None:
    git_repo.write("dir with space/ünï code.py", "é = 1\r\n")
    git_repo.write("bin.dat", b"\x00\xff\x00")
    sha = git_repo.commit()
    assert git.show_file(git_repo.path, sha, "dir with space/ünï code.py") == "é = 1\r\n".encode()
    assert git.show_file(git_repo.path, sha, "bin.dat") == b"\x00\xff\x00"
    assert git.show_file(git_repo.path, sha, "absent.py") is None
    with pytest.raises(UserError, match="unknown commit"):
        git.show_file(git_repo.path, "0" * 40, "bin.dat")


def test_untracked_files_excludes_ignored_and_tracked(git_repo: GitRepo) -> None:
    git_repo.write(".gitignore", "*.log\n")
    git_repo.write("tracked.py", "")
    git_repo.commit()
    git_repo.write("new file ü.py", "x\n")
    git_repo.write("debug.log", "noise\n")
    git_repo.write("sub/dir/n.py", "y\n")
    assert sorted(git.untracked_files(git_repo.path)) == ["new file ü.py", "sub/dir/n.py"]


def _worktrees(repo: GitRepo) -> list[str]:
    return [line for line in repo.git("worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")]


def test_worktree_checks_out_sha_and_is_removed(git_repo: GitRepo) -> None:
    git_repo.write("m.py", "base\n")
    base = git_repo.commit("base")
    git_repo.write("m.py", "head\n")
    git_repo.commit("head")
    with git.worktree(git_repo.path, base) as tree:
        with open(os.path.join(tree, "m.py")) as fh:
            assert fh.read() == "base\n"
        assert git.head_sha(tree) == base
        assert len(_worktrees(git_repo)) == 2
    assert not os.path.exists(tree)
    assert len(_worktrees(git_repo)) == 1
    assert git_repo.read("m.py") == "head\n"  # the main tree is untouched


def test_worktree_is_removed_when_the_body_raises(git_repo: GitRepo) -> None:
    sha = git_repo.commit("c")
    with pytest.raises(RuntimeError, match="boom"), git.worktree(git_repo.path, sha) as tree:
        with open(os.path.join(tree, "scratch.txt"), "w") as fh:  # untracked: needs --force
            fh.write("dirty")
        raise RuntimeError("boom")
    assert not os.path.exists(tree)
    assert len(_worktrees(git_repo)) == 1


def test_worktree_of_unknown_sha_raises_and_leaves_nothing(git_repo: GitRepo) -> None:
    git_repo.commit("c")
    with pytest.raises(git.GitError, match="worktree add"), git.worktree(git_repo.path, "0" * 40):
        pass  # pragma: no cover - never entered
    assert len(_worktrees(git_repo)) == 1


def test_git_error_names_the_command_and_git_message(git_repo: GitRepo) -> None:
    with pytest.raises(git.GitError) as info:
        git.run_git(git_repo.path, "cat-file", "-p", "nope")
    assert info.value.returncode != 0
    assert "git cat-file -p nope failed" in str(info.value)
    assert isinstance(info.value, UserError)


def test_untracked_nested_repository_is_not_a_file(git_repo: GitRepo) -> None:
    git_repo.commit("c")
    GitRepo.init(git_repo.path / "vendored")
    git_repo.write("vendored/x.py", "x\n")
    git_repo.write("mine.py", "m\n")
    assert git.untracked_files(git_repo.path) == ["mine.py"]
