"""A fake GitHub REST API for the test suite: a real HTTP server on loopback.

PyGithub talks to it through `base_url`, exactly as it talks to api.github.com or a GitHub
Enterprise Server (`prefix="/api/v3"`). It *stores* state (issues and PRs, issue comments,
reviews and review comments, check runs with annotations, commit statuses, labels), so tests
assert the end state ("one summary comment after two runs"), not call counts.

It enforces the GitHub rules pt2bot must respect:
- every request must match GitHub's OpenAPI description (the vendored subset in
  tests/data/github-openapi-subset.json): path, method, parameters, body. A request that does
  not validate is answered 422 *and* recorded in `violations`; the `fake_github` fixture fails
  the test at teardown when there is any (so a bad request is never silently tolerated);
- a review with any comment on a (path, line, side) outside the PR diff fails WHOLE with 422;
- comment/review bodies over 65,536 characters and check-run summary/text over 65,535 → 422;
- more than 50 annotations in one check-run request → 422;
- writes without a token → 401; an unknown token → 401; a read-only token → 403 on writes;
- `GET /user` answers the token's account, except for installation tokens (`ghs_...`, what
  the Actions GITHUB_TOKEN is), which GitHub answers 403 ("enabledForGitHubApps": false);
- PRs may share a head SHA from different head repositories and branches (`add_pull`'s
  `head_owner`, `head_repo`, `head_ref`), as anyone can push the same commit to a fork;
- injectable faults: `fail_next(...)` (e.g. one 500, or a secondary rate limit 403 with
  `Retry-After: 1`).
"""
from __future__ import annotations

import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlencode

from openapi_core import OpenAPI
from openapi_core.datatypes import RequestParameters
from werkzeug.datastructures import Headers, ImmutableMultiDict
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

SPEC_PATH = Path(__file__).parent / "data" / "github-openapi-subset.json"
MAX_COMMENT = 65536
MAX_CHECK_TEXT = 65535
MAX_ANNOTATIONS = 50
SPEC_HOST = "https://api.github.com"

WRITE_TOKEN = "ghs_write"
READ_TOKEN = "ghs_read"
HUMAN_TOKEN = "ghp_alice"
OTHER_BOT_TOKEN = "ghs_otherbot"     # another App installed on the repository
APP_TOKEN = "ghs_ourapp"             # our own GitHub App's installation token

_SPEC_LOCK = threading.Lock()
_SPEC: OpenAPI | None = None


def _openapi() -> OpenAPI:
    """Parse the spec once per process (it is ~230 kB; parsing is the slow part)."""
    global _SPEC
    with _SPEC_LOCK:
        if _SPEC is None:
            _SPEC = OpenAPI.from_dict(json.loads(SPEC_PATH.read_text(encoding="utf-8")))
        return _SPEC


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, *args: Any, **kwargs: Any) -> None:  # the fake's `log` is enough
        pass


class _SpecRequest:
    """openapi-core's Request protocol over a werkzeug request, re-hosted onto the spec's
    server so that GHES prefixes and the loopback port do not matter."""

    def __init__(self, req: Request, path: str) -> None:
        self._req = req
        self._path = path
        self.parameters = RequestParameters(query=ImmutableMultiDict(req.args),
                                            header=Headers(req.headers), cookie=req.cookies)

    host_url = SPEC_HOST

    @property
    def path(self) -> str:
        return self._path

    @property
    def method(self) -> str:
        return self._req.method.lower()

    @property
    def body(self) -> bytes | None:
        data = self._req.get_data(as_text=False)
        return data or None

    @property
    def content_type(self) -> str:
        return (self._req.content_type or "application/json").lower()


@dataclass
class Token:
    login: str
    can_write: bool
    type: str = "Bot"


@dataclass
class Fault:
    method: str
    path_re: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: dict[str, Any]
    times: int


class HTTPError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None,
                 errors: list[Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.errors = errors


@dataclass
class PullRequest:
    number: int
    head_sha: str
    base_sha: str
    head_ref: str
    head_owner: str
    files: dict[str, str]                 # path -> unified diff hunks (the `patch` field)
    head_repo: str = ""                   # the head repository's name (its owner: head_owner)
    commentable: set[tuple[str, int, str]] = field(default_factory=set)
    state: str = "open"
    title: str = "A pull request"


def commentable_lines(path: str, patch: str) -> set[tuple[str, int, str]]:
    """(path, line, side) triples a review comment may target: RIGHT = added + context lines
    (new numbering), LEFT = removed + context lines (old numbering)."""
    out: set[tuple[str, int, str]] = set()
    old = new = 0
    for raw in patch.splitlines():
        m = re.match(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", raw)
        if m:
            old, new = int(m.group(1)), int(m.group(2))
            continue
        if raw.startswith("+"):
            out.add((path, new, "RIGHT"))
            new += 1
        elif raw.startswith("-"):
            out.add((path, old, "LEFT"))
            old += 1
        elif raw.startswith("\\"):
            continue
        else:
            out.add((path, new, "RIGHT"))
            out.add((path, old, "LEFT"))
            old += 1
            new += 1
    return out


class FakeGitHub:
    """One repository (`owner/name`) with its issues, PRs, comments, reviews and checks."""

    def __init__(self, owner: str = "octo", name: str = "demo", *, prefix: str = "") -> None:
        self.owner, self.name = owner, name
        self.prefix = prefix.rstrip("/")
        self.tokens: dict[str, Token] = {
            WRITE_TOKEN: Token("github-actions[bot]", True),
            READ_TOKEN: Token("github-actions[bot]", False),
            HUMAN_TOKEN: Token("alice", True, "User"),
            OTHER_BOT_TOKEN: Token("other-app[bot]", True),
            APP_TOKEN: Token("pt2bot-app[bot]", True),
        }
        self._ids = itertools.count(1000)
        self._numbers = itertools.count(1)
        self.lock = threading.RLock()
        self.pulls: dict[int, PullRequest] = {}
        self.issues: dict[int, dict[str, Any]] = {}
        self.issue_comments: list[dict[str, Any]] = []
        self.reviews: list[dict[str, Any]] = []
        self.review_comments: list[dict[str, Any]] = []
        self.check_runs: list[dict[str, Any]] = []
        self.statuses: list[dict[str, Any]] = []
        self.labels: dict[str, dict[str, Any]] = {}
        self.commits: dict[str, dict[str, Any]] = {}
        self.faults: list[Fault] = []
        self.violations: list[str] = []
        self.log: list[tuple[str, str, int]] = []
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._routes = self._build_routes()

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> "FakeGitHub":
        _openapi()
        self._server = make_server("127.0.0.1", 0, self._wsgi, threaded=True,
                                   request_handler=_QuietHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "FakeGitHub":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}{self.prefix}"

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def repo_url(self) -> str:
        return f"{self.base_url}/repos/{self.full_name}"

    # ------------------------------------------------------------- test set-up
    def add_pull(self, *, head_sha: str, files: dict[str, str], base_sha: str = "b" * 40,
                 head_ref: str = "feature", head_owner: str | None = None,
                 head_repo: str | None = None, number: int | None = None) -> PullRequest:
        with self.lock:
            n = number or next(self._numbers)
            pr = PullRequest(n, head_sha, base_sha, head_ref, head_owner or self.owner, files,
                             head_repo=head_repo or self.name)
            for path, patch in files.items():
                pr.commentable |= commentable_lines(path, patch)
            self.pulls[n] = pr
            self.issues[n] = self._new_issue(n, pr.title, "", [], self.tokens[HUMAN_TOKEN],
                                             is_pr=True)
            self.commits.setdefault(head_sha, {"sha": head_sha})
            return pr

    def push(self, number: int, head_sha: str, files: dict[str, str] | None = None) -> None:
        """A new push to the PR: the head moves and (optionally) the diff changes."""
        with self.lock:
            pr = self.pulls[number]
            pr.head_sha = head_sha
            if files is not None:
                pr.files = files
                pr.commentable = set()
                for path, patch in files.items():
                    pr.commentable |= commentable_lines(path, patch)
            self.commits.setdefault(head_sha, {"sha": head_sha})

    def fail_next(self, method: str, path_regex: str, status: int = 500, *, times: int = 1,
                  headers: dict[str, str] | None = None, message: str = "Server Error") -> None:
        self.faults.append(Fault(method.upper(), re.compile(path_regex), status,
                                 headers or {}, {"message": message}, times))

    def secondary_rate_limit_next(self, method: str, path_regex: str, *, times: int = 1) -> None:
        self.fail_next(method, path_regex, 403, times=times, headers={"Retry-After": "1"},
                       message="You have exceeded a secondary rate limit. Please wait a few "
                               "minutes before you try again.")

    # ------------------------------------------------------------- queries for tests
    def summary_comments(self, number: int, marker: str = "<!-- pt2bot:summary -->") -> list[dict]:
        return [c for c in self.issue_comments if c["_issue"] == number and marker in c["body"]]

    def comments_on(self, number: int) -> list[dict]:
        return [c for c in self.review_comments if c["_pull"] == number]

    def checks_for(self, sha: str, name: str = "pt2bot") -> list[dict]:
        return [c for c in self.check_runs if c["head_sha"] == sha and c["name"] == name]

    # ------------------------------------------------------------- representations
    def _user(self, tok: Token) -> dict[str, Any]:
        return {"login": tok.login, "id": abs(hash(tok.login)) % 10**6, "type": tok.type,
                "url": f"{self.base_url}/users/{tok.login}"}

    def _repo_json(self) -> dict[str, Any]:
        return {"id": 1, "name": self.name, "full_name": self.full_name,
                "owner": {"login": self.owner, "id": 2, "type": "User"},
                "url": self.repo_url, "html_url": f"https://github.test/{self.full_name}",
                "default_branch": "main", "private": False}

    def _new_issue(self, n: int, title: str, body: str, labels: list[str], tok: Token,
                   is_pr: bool = False) -> dict[str, Any]:
        issue = {"number": n, "id": next(self._ids), "title": title, "body": body,
                 "state": "open", "labels": labels, "user": self._user(tok),
                 "created_at": _now(), "updated_at": _now(), "comments": 0,
                 "_is_pr": is_pr}
        return issue

    def _issue_json(self, issue: dict[str, Any]) -> dict[str, Any]:
        n = issue["number"]
        out = {k: v for k, v in issue.items() if not k.startswith("_")}
        out["labels"] = [self._label_json(name) for name in issue["labels"]]
        out["url"] = f"{self.repo_url}/issues/{n}"
        out["html_url"] = f"https://github.test/{self.full_name}/issues/{n}"
        out["repository_url"] = self.repo_url
        if issue["_is_pr"]:
            out["pull_request"] = {"url": f"{self.repo_url}/pulls/{n}"}
        return out

    def _label_json(self, name: str) -> dict[str, Any]:
        lab = self.labels.get(name) or {"name": name, "color": "ededed", "description": None}
        return {**lab, "url": f"{self.repo_url}/labels/{name}"}

    def _pull_json(self, pr: PullRequest) -> dict[str, Any]:
        repo = self._repo_json()
        head_repo = dict(repo, name=pr.head_repo, full_name=f"{pr.head_owner}/{pr.head_repo}",
                         owner={"login": pr.head_owner, "id": 3, "type": "User"})
        return {"number": pr.number, "id": 5000 + pr.number, "state": pr.state,
                "title": pr.title, "url": f"{self.repo_url}/pulls/{pr.number}",
                "issue_url": f"{self.repo_url}/issues/{pr.number}",
                "html_url": f"https://github.test/{self.full_name}/pull/{pr.number}",
                "head": {"sha": pr.head_sha, "ref": pr.head_ref, "label": f"{pr.head_owner}:{pr.head_ref}",
                         "repo": head_repo},
                "base": {"sha": pr.base_sha, "ref": "main", "label": f"{self.owner}:main",
                         "repo": repo},
                "user": self._user(self.tokens[HUMAN_TOKEN])}

    def _comment_json(self, c: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in c.items() if not k.startswith("_")}
        return out

    def _check_json(self, cr: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in cr.items() if not k.startswith("_")}
        out["output"] = {k: v for k, v in cr["output"].items() if k != "annotations"}
        out["output"]["annotations_count"] = len(cr["output"]["annotations"])
        out["output"]["annotations_url"] = f"{cr['url']}/annotations"
        return out

    # ------------------------------------------------------------- WSGI plumbing
    def _wsgi(self, environ: dict, start_response: Callable) -> Any:
        req = Request(environ)
        try:
            resp = self._dispatch(req)
        except HTTPError as e:
            body: dict[str, Any] = {"message": e.message,
                                    "documentation_url": "https://docs.github.com/rest"}
            if e.errors is not None:
                body["errors"] = e.errors
            resp = Response(json.dumps(body), status=e.status, headers=e.headers,
                            content_type="application/json; charset=utf-8")
        self.log.append((req.method, req.full_path.rstrip("?"), resp.status_code))
        return resp(environ, start_response)

    def _dispatch(self, req: Request) -> Response:
        path = req.path
        if self.prefix:
            if not path.startswith(self.prefix + "/"):
                raise HTTPError(404, "Not Found (missing API prefix)")
            path = path[len(self.prefix):]
        tok = self._authenticate(req)
        for f in list(self.faults):
            if f.method == req.method and f.path_re.search(path):
                f.times -= 1
                if f.times <= 0:
                    self.faults.remove(f)
                raise HTTPError(f.status, f.body["message"], f.headers)
        self._validate(req, path)
        for method, pattern, handler in self._routes:
            m = pattern.fullmatch(path)
            if m and method == req.method:
                if method != "GET" and tok is not None and not tok.can_write:
                    raise HTTPError(403, "Resource not accessible by integration")
                if method != "GET" and tok is None:
                    raise HTTPError(401, "Requires authentication")
                body = req.get_json(silent=True) if req.get_data() else None
                with self.lock:
                    status, payload, headers = handler(req, tok, body, **m.groupdict())
                if status == 204:
                    return Response(status=204)
                return Response(json.dumps(payload), status=status, headers=headers or {},
                                content_type="application/json; charset=utf-8")
        raise HTTPError(404, "Not Found")

    def _authenticate(self, req: Request) -> Token | None:
        auth = req.headers.get("Authorization")
        if not auth:
            return None
        scheme, _, value = auth.partition(" ")
        if scheme.lower() not in ("token", "bearer") or value not in self.tokens:
            raise HTTPError(401, "Bad credentials")
        return self.tokens[value]

    def _validate(self, req: Request, path: str) -> None:
        try:
            _openapi().validate_request(_SpecRequest(req, path))
        except Exception as e:  # noqa: BLE001 - every validation failure is reported as-is
            detail = f"{type(e).__name__}: {e}"
            cause = getattr(e, "__cause__", None)
            if cause is not None:
                detail += f" ({type(cause).__name__}: {cause})"
            for sub in getattr(e, "schema_errors", None) or getattr(cause, "schema_errors", None) or []:
                detail += f"; {getattr(sub, 'message', sub)}"
            self.violations.append(f"{req.method} {req.full_path}: {detail}")
            raise HTTPError(422, f"fake-github: request does not match GitHub's OpenAPI: {detail}")

    def _paginate(self, req: Request, items: list[Any]) -> tuple[int, list[Any], dict[str, str]]:
        per_page = min(int(req.args.get("per_page", 30)), 100)
        page = int(req.args.get("page", 1))
        start = (page - 1) * per_page
        chunk = items[start:start + per_page]
        headers: dict[str, str] = {}
        last = max(1, -(-len(items) // per_page))
        if page < last:
            args = dict(req.args)
            url = f"http://{req.host}{req.path}"
            links = []
            for rel, p in (("next", page + 1), ("last", last)):
                args["page"] = str(p)
                links.append(f'<{url}?{urlencode(args)}>; rel="{rel}"')
            headers["Link"] = ", ".join(links)
        return 200, chunk, headers

    # ------------------------------------------------------------- routes
    def _build_routes(self) -> list[tuple[str, re.Pattern[str], Callable]]:
        R = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"
        table = [
            ("GET", r"/rate_limit", self._rate_limit),
            ("GET", r"/user", self._get_user),
            ("GET", R, self._get_repo),
            ("GET", R + r"/pulls", self._list_pulls),
            ("GET", R + r"/pulls/(?P<n>\d+)", self._get_pull),
            ("GET", R + r"/pulls/(?P<n>\d+)/files", self._pull_files),
            ("GET", R + r"/pulls/(?P<n>\d+)/comments", self._list_review_comments),
            ("POST", R + r"/pulls/(?P<n>\d+)/comments", self._create_review_comment),
            ("PATCH", R + r"/pulls/comments/(?P<cid>\d+)", self._edit_review_comment),
            ("DELETE", R + r"/pulls/comments/(?P<cid>\d+)", self._delete_review_comment),
            ("GET", R + r"/pulls/(?P<n>\d+)/reviews", self._list_reviews),
            ("POST", R + r"/pulls/(?P<n>\d+)/reviews", self._create_review),
            ("GET", R + r"/issues", self._list_issues),
            ("POST", R + r"/issues", self._create_issue),
            ("GET", R + r"/issues/(?P<n>\d+)", self._get_issue),
            ("PATCH", R + r"/issues/(?P<n>\d+)", self._edit_issue),
            ("GET", R + r"/issues/(?P<n>\d+)/comments", self._list_issue_comments),
            ("POST", R + r"/issues/(?P<n>\d+)/comments", self._create_issue_comment),
            ("POST", R + r"/issues/(?P<n>\d+)/labels", self._add_labels),
            ("GET", R + r"/issues/comments/(?P<cid>\d+)", self._get_issue_comment),
            ("PATCH", R + r"/issues/comments/(?P<cid>\d+)", self._edit_issue_comment),
            ("DELETE", R + r"/issues/comments/(?P<cid>\d+)", self._delete_issue_comment),
            ("GET", R + r"/labels", self._list_labels),
            ("POST", R + r"/labels", self._create_label),
            ("POST", R + r"/check-runs", self._create_check),
            ("GET", R + r"/check-runs/(?P<cid>\d+)", self._get_check),
            ("PATCH", R + r"/check-runs/(?P<cid>\d+)", self._edit_check),
            ("GET", R + r"/check-runs/(?P<cid>\d+)/annotations", self._check_annotations),
            ("GET", R + r"/commits/(?P<sha>[^/]+)/pulls", self._commit_pulls),
            ("GET", R + r"/commits/(?P<sha>[^/]+)/check-runs", self._commit_checks),
            ("GET", R + r"/commits/(?P<sha>[^/]+)/status", self._combined_status),
            ("GET", R + r"/commits/(?P<sha>[^/]+)", self._get_commit),
            ("POST", R + r"/statuses/(?P<sha>[^/]+)", self._create_status),
        ]
        return [(m, re.compile(p), h) for m, p, h in table]

    def _check_repo(self, owner: str, repo: str) -> None:
        if f"{owner}/{repo}".lower() != self.full_name.lower():
            raise HTTPError(404, "Not Found")

    def _pull(self, owner: str, repo: str, n: str) -> PullRequest:
        self._check_repo(owner, repo)
        pr = self.pulls.get(int(n))
        if pr is None:
            raise HTTPError(404, "Not Found")
        return pr

    def _issue(self, owner: str, repo: str, n: str) -> dict[str, Any]:
        self._check_repo(owner, repo)
        issue = self.issues.get(int(n))
        if issue is None:
            raise HTTPError(404, "Not Found")
        return issue

    @staticmethod
    def _check_body_len(text: Any, limit: int = MAX_COMMENT, what: str = "body") -> None:
        if isinstance(text, str) and len(text) > limit:
            raise HTTPError(422, "Validation Failed", errors=[{
                "resource": "IssueComment", "code": "custom", "field": what,
                "message": f"{what} is too long (maximum is {limit} characters)"}])

    def _get_user(self, req, tok, body):
        if tok is None:
            raise HTTPError(401, "Requires authentication")
        if tok.type == "Bot":
            raise HTTPError(403, "Resource not accessible by integration")
        return 200, dict(self._user(tok), user_view_type="public", node_id="U_1",
                         avatar_url="", gravatar_id=None, html_url=f"https://github.test/{tok.login}",
                         site_admin=False, name=None, company=None, blog=None, location=None,
                         email=None, hireable=None, bio=None, public_repos=0, public_gists=0,
                         followers=0, following=0, created_at=_now(), updated_at=_now()), None

    def _rate_limit(self, req, tok, body):
        core = {"limit": 5000, "remaining": 4999, "reset": 2**31 - 1, "used": 1}
        return 200, {"resources": {"core": core}, "rate": core}, None

    def _get_repo(self, req, tok, body, owner, repo):
        self._check_repo(owner, repo)
        return 200, self._repo_json(), None

    # pulls -------------------------------------------------------------
    def _list_pulls(self, req, tok, body, owner, repo):
        self._check_repo(owner, repo)
        state = req.args.get("state", "open")
        head = req.args.get("head")
        out = []
        for pr in self.pulls.values():
            if state != "all" and pr.state != state:
                continue
            if head and head != f"{pr.head_owner}:{pr.head_ref}":
                continue
            out.append(self._pull_json(pr))
        return self._paginate(req, out)

    def _get_pull(self, req, tok, body, owner, repo, n):
        return 200, self._pull_json(self._pull(owner, repo, n)), None

    def _pull_files(self, req, tok, body, owner, repo, n):
        pr = self._pull(owner, repo, n)
        files = [{"filename": p, "status": "modified", "patch": patch, "sha": "0" * 40,
                  "additions": patch.count("\n+"), "deletions": patch.count("\n-"),
                  "changes": 0} for p, patch in pr.files.items()]
        return self._paginate(req, files)

    def _new_review_comment(self, pr: PullRequest, tok: Token, c: dict[str, Any],
                            review_id: int | None, commit_id: str) -> dict[str, Any]:
        cid = next(self._ids)
        return {"id": cid, "pull_request_review_id": review_id, "body": c["body"],
                "path": c["path"], "line": c.get("line"), "side": c.get("side", "RIGHT"),
                "start_line": c.get("start_line"), "original_line": c.get("line"),
                "commit_id": commit_id, "original_commit_id": commit_id,
                "in_reply_to_id": c.get("in_reply_to"), "user": self._user(tok),
                "created_at": _now(), "updated_at": _now(),
                "url": f"{self.repo_url}/pulls/comments/{cid}",
                "html_url": f"https://github.test/{self.full_name}/pull/{pr.number}#discussion_r{cid}",
                "pull_request_url": f"{self.repo_url}/pulls/{pr.number}", "_pull": pr.number}

    def _list_review_comments(self, req, tok, body, owner, repo, n):
        pr = self._pull(owner, repo, n)
        return self._paginate(req, [self._comment_json(c) for c in self.review_comments
                                    if c["_pull"] == pr.number])

    def _create_review_comment(self, req, tok, body, owner, repo, n):
        pr = self._pull(owner, repo, n)
        self._check_body_len(body.get("body"))
        if body.get("in_reply_to") is not None:
            parent = self._find(self.review_comments, body["in_reply_to"])
            c = dict(body, path=parent["path"], line=parent["line"], side=parent["side"])
        else:
            c = body
            if (c["path"], c.get("line"), c.get("side", "RIGHT")) not in pr.commentable:
                raise HTTPError(422, "Validation Failed",
                                errors=[{"resource": "PullRequestReviewComment", "code": "custom",
                                         "field": "pull_request_review_thread.line",
                                         "message": "could not be resolved"}])
        new = self._new_review_comment(pr, tok, c, None, body["commit_id"])
        self.review_comments.append(new)
        return 201, self._comment_json(new), None

    def _find(self, items: list[dict], cid: Any) -> dict[str, Any]:
        for c in items:
            if c["id"] == int(cid):
                return c
        raise HTTPError(404, "Not Found")

    def _edit_review_comment(self, req, tok, body, owner, repo, cid):
        self._check_repo(owner, repo)
        c = self._find(self.review_comments, cid)
        self._check_body_len(body["body"])
        c["body"] = body["body"]
        c["updated_at"] = _now()
        return 200, self._comment_json(c), None

    def _delete_review_comment(self, req, tok, body, owner, repo, cid):
        self._check_repo(owner, repo)
        c = self._find(self.review_comments, cid)
        self.review_comments.remove(c)
        return 204, None, None

    def _list_reviews(self, req, tok, body, owner, repo, n):
        pr = self._pull(owner, repo, n)
        return self._paginate(req, [self._comment_json(r) for r in self.reviews
                                    if r["_pull"] == pr.number])

    def _create_review(self, req, tok, body, owner, repo, n):
        pr = self._pull(owner, repo, n)
        self._check_body_len(body.get("body"))
        comments = body.get("comments") or []
        bad = []
        for i, c in enumerate(comments):
            self._check_body_len(c.get("body"), what=f"comments[{i}].body")
            side = c.get("side", "RIGHT")
            if (c.get("path"), c.get("line"), side) not in pr.commentable:
                bad.append(f"comments[{i}] {c.get('path')}:{c.get('line')} {side}")
            if c.get("start_line") is not None and (
                    c["path"], c["start_line"], c.get("start_side", side)) not in pr.commentable:
                bad.append(f"comments[{i}] start_line {c['start_line']}")
        if bad:
            # GitHub rejects the WHOLE review: nothing is stored.
            raise HTTPError(422, "Unprocessable Entity",
                            errors=[f"Line could not be resolved: {b}" for b in bad])
        if not body.get("event"):
            raise HTTPError(422, "fake-github: pending reviews are not supported")
        rid = next(self._ids)
        commit_id = body.get("commit_id") or pr.head_sha
        review = {"id": rid, "body": body.get("body") or "", "state":
                  {"COMMENT": "COMMENTED", "APPROVE": "APPROVED",
                   "REQUEST_CHANGES": "CHANGES_REQUESTED"}[body["event"]],
                  "commit_id": commit_id, "user": self._user(tok), "submitted_at": _now(),
                  "html_url": f"https://github.test/{self.full_name}/pull/{pr.number}#pullrequestreview-{rid}",
                  "pull_request_url": f"{self.repo_url}/pulls/{pr.number}", "_pull": pr.number}
        self.reviews.append(review)
        for c in comments:
            self.review_comments.append(self._new_review_comment(pr, tok, c, rid, commit_id))
        return 200, self._comment_json(review), None

    # issues ------------------------------------------------------------
    def _list_issues(self, req, tok, body, owner, repo):
        self._check_repo(owner, repo)
        state = req.args.get("state", "open")
        want = [x for x in (req.args.get("labels") or "").split(",") if x]
        out = [self._issue_json(i) for i in sorted(self.issues.values(), key=lambda i: -i["number"])
               if (state == "all" or i["state"] == state) and all(w in i["labels"] for w in want)]
        return self._paginate(req, out)

    def _create_issue(self, req, tok, body, owner, repo):
        self._check_repo(owner, repo)
        self._check_body_len(body.get("body"))
        labels = [lab if isinstance(lab, str) else lab["name"] for lab in body.get("labels") or []]
        for lab in labels:
            self.labels.setdefault(lab, {"name": lab, "color": "ededed", "description": None})
        n = next(self._numbers)
        self.issues[n] = self._new_issue(n, body["title"], body.get("body") or "", labels, tok)
        return 201, self._issue_json(self.issues[n]), None

    def _get_issue(self, req, tok, body, owner, repo, n):
        return 200, self._issue_json(self._issue(owner, repo, n)), None

    def _edit_issue(self, req, tok, body, owner, repo, n):
        issue = self._issue(owner, repo, n)
        self._check_body_len(body.get("body"))
        for key in ("title", "body", "state"):
            if key in body:
                issue[key] = body[key]
        if "labels" in body:
            issue["labels"] = [lab if isinstance(lab, str) else lab["name"] for lab in body["labels"]]
        issue["updated_at"] = _now()
        return 200, self._issue_json(issue), None

    def _list_issue_comments(self, req, tok, body, owner, repo, n):
        issue = self._issue(owner, repo, n)
        return self._paginate(req, [self._comment_json(c) for c in self.issue_comments
                                    if c["_issue"] == issue["number"]])

    def _create_issue_comment(self, req, tok, body, owner, repo, n):
        issue = self._issue(owner, repo, n)
        self._check_body_len(body["body"])
        cid = next(self._ids)
        c = {"id": cid, "body": body["body"], "user": self._user(tok), "created_at": _now(),
             "updated_at": _now(), "url": f"{self.repo_url}/issues/comments/{cid}",
             "html_url": f"https://github.test/{self.full_name}/issues/{issue['number']}#issuecomment-{cid}",
             "issue_url": f"{self.repo_url}/issues/{issue['number']}", "_issue": issue["number"]}
        self.issue_comments.append(c)
        issue["comments"] += 1
        return 201, self._comment_json(c), None

    def _add_labels(self, req, tok, body, owner, repo, n):
        issue = self._issue(owner, repo, n)
        items = body["labels"] if isinstance(body, dict) else body
        for lab in items:
            name = lab if isinstance(lab, str) else lab["name"]
            if name not in issue["labels"]:
                issue["labels"].append(name)
        return 200, [self._label_json(x) for x in issue["labels"]], None

    def _get_issue_comment(self, req, tok, body, owner, repo, cid):
        self._check_repo(owner, repo)
        return 200, self._comment_json(self._find(self.issue_comments, cid)), None

    def _edit_issue_comment(self, req, tok, body, owner, repo, cid):
        self._check_repo(owner, repo)
        c = self._find(self.issue_comments, cid)
        self._check_body_len(body["body"])
        c["body"] = body["body"]
        c["updated_at"] = _now()
        return 200, self._comment_json(c), None

    def _delete_issue_comment(self, req, tok, body, owner, repo, cid):
        self._check_repo(owner, repo)
        self.issue_comments.remove(self._find(self.issue_comments, cid))
        return 204, None, None

    def _list_labels(self, req, tok, body, owner, repo):
        self._check_repo(owner, repo)
        return self._paginate(req, [self._label_json(n) for n in self.labels])

    def _create_label(self, req, tok, body, owner, repo):
        self._check_repo(owner, repo)
        if body["name"] in self.labels:
            raise HTTPError(422, "Validation Failed",
                            errors=[{"resource": "Label", "code": "already_exists", "field": "name"}])
        self.labels[body["name"]] = {"name": body["name"], "color": body.get("color", "ededed"),
                                     "description": body.get("description")}
        return 201, self._label_json(body["name"]), None

    # checks and statuses ----------------------------------------------
    def _apply_output(self, cr: dict[str, Any], output: dict[str, Any] | None) -> None:
        if not output:
            return
        anns = output.get("annotations") or []
        if len(anns) > MAX_ANNOTATIONS:
            raise HTTPError(422, "Validation Failed", errors=[{
                "resource": "CheckRun", "code": "custom", "field": "annotations",
                "message": f"at most {MAX_ANNOTATIONS} annotations per request ({len(anns)} sent)"}])
        for key in ("summary", "text"):
            self._check_body_len(output.get(key), MAX_CHECK_TEXT, f"output.{key}")
        for key in ("title", "summary", "text"):
            if key in output:
                cr["output"][key] = output[key]
        # GitHub appends the annotations of each update to the run's list.
        cr["output"]["annotations"].extend(anns)

    def _create_check(self, req, tok, body, owner, repo):
        self._check_repo(owner, repo)
        cid = next(self._ids)
        status = "completed" if body.get("conclusion") else body.get("status", "queued")
        if status == "completed" and not body.get("conclusion"):
            raise HTTPError(422, "conclusion is required when status is completed")
        cr = {"id": cid, "name": body["name"], "head_sha": body["head_sha"], "status": status,
              "conclusion": body.get("conclusion"), "details_url": body.get("details_url"),
              "external_id": body.get("external_id"), "started_at": _now(),
              "completed_at": _now() if status == "completed" else None,
              "url": f"{self.repo_url}/check-runs/{cid}",
              "html_url": f"https://github.test/{self.full_name}/runs/{cid}",
              "output": {"title": None, "summary": None, "text": None, "annotations": []}}
        self._apply_output(cr, body.get("output"))
        self.check_runs.append(cr)
        return 201, self._check_json(cr), None

    def _get_check(self, req, tok, body, owner, repo, cid):
        self._check_repo(owner, repo)
        return 200, self._check_json(self._find(self.check_runs, cid)), None

    def _edit_check(self, req, tok, body, owner, repo, cid):
        self._check_repo(owner, repo)
        cr = self._find(self.check_runs, cid)
        self._apply_output(cr, body.get("output"))
        for key in ("name", "details_url", "external_id", "status", "conclusion"):
            if key in body:
                cr[key] = body[key]
        if body.get("conclusion"):
            cr["status"] = "completed"
        return 200, self._check_json(cr), None

    def _check_annotations(self, req, tok, body, owner, repo, cid):
        self._check_repo(owner, repo)
        return self._paginate(req, list(self._find(self.check_runs, cid)["output"]["annotations"]))

    def _commit_pulls(self, req, tok, body, owner, repo, sha):
        self._check_repo(owner, repo)
        # Like GitHub for fork PRs, only PRs whose head commit is in this repository's own
        # branches are found here; fork heads are found through `pulls?head=owner:branch`.
        out = [self._pull_json(pr) for pr in self.pulls.values()
               if pr.head_sha == sha and pr.head_owner == self.owner]
        return self._paginate(req, out)

    def _commit_checks(self, req, tok, body, owner, repo, sha):
        self._check_repo(owner, repo)
        runs = [self._check_json(c) for c in self.check_runs if c["head_sha"] == sha
                and (not req.args.get("check_name") or c["name"] == req.args["check_name"])]
        return 200, {"total_count": len(runs), "check_runs": runs}, None

    def _combined_status(self, req, tok, body, owner, repo, sha):
        self._check_repo(owner, repo)
        sts = [s for s in self.statuses if s["_sha"] == sha]
        return 200, {"sha": sha, "state": sts[-1]["state"] if sts else "pending",
                     "statuses": [self._comment_json(s) for s in sts],
                     "total_count": len(sts)}, None

    def _get_commit(self, req, tok, body, owner, repo, sha):
        self._check_repo(owner, repo)
        if sha not in self.commits:
            raise HTTPError(422, f"No commit found for SHA: {sha}")
        return 200, {"sha": sha, "url": f"{self.repo_url}/commits/{sha}",
                     "html_url": f"https://github.test/{self.full_name}/commit/{sha}",
                     "commit": {"message": "a commit"}, "files": [], "parents": []}, None

    def _create_status(self, req, tok, body, owner, repo, sha):
        self._check_repo(owner, repo)
        sid = next(self._ids)
        s = {"id": sid, "state": body["state"], "context": body.get("context", "default"),
             "description": body.get("description"), "target_url": body.get("target_url"),
             "url": f"{self.repo_url}/statuses/{sha}", "created_at": _now(), "_sha": sha}
        self.statuses.append(s)
        return 201, self._comment_json(s), None
