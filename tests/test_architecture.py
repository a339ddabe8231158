"""The structure docs/architecture.md describes, checked on every run (from the AST: nothing is imported).

tools/imports_report.py builds the import graph of pt2bot/; these tests hold the lines the
architecture draws: no cycle (a lazy, function-level import is a dependency too), no module
reaching into another's private names, and the layering of the stages.
"""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..")
_spec = importlib.util.spec_from_file_location(
    "imports_report", os.path.join(ROOT, "tools", "imports_report.py"))
imports_report = importlib.util.module_from_spec(_spec)
sys.modules["imports_report"] = imports_report   # its dataclasses look themselves up there
_spec.loader.exec_module(imports_report)

MODULES = imports_report.find_modules(os.path.join(ROOT, "pt2bot"))
EDGES = [e for m, p in MODULES.items() for e in imports_report.edges_of(m, p, MODULES)]


def _in(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_the_graph_is_read():
    # a broken reader would make every test below pass vacuously
    assert len(MODULES) > 60
    assert any(e.src == "pt2bot.pipeline" and e.dst == "pt2bot.compare" for e in EDGES)
    assert any(e.lazy for e in EDGES)


def test_no_import_cycles_not_even_through_function_level_imports():
    assert imports_report.cycles(sorted(MODULES), EDGES) == []


def test_no_module_imports_private_names_of_another():
    private = [f"{e.src}:{e.line} imports {e.dst}.{n}" for e in EDGES for n in e.names
               if n.startswith("_") and not n.startswith("__")]
    assert private == []


STATIC_SIDE = ("pt2bot.findings", "pt2bot.gb", "pt2bot.errors", "pt2bot.config",
               "pt2bot.configfile", "pt2bot.changes", "pt2bot.git", "pt2bot.rules",
               "pt2bot.analysis", "pt2bot.static")
LATER_STAGES = ("pt2bot.smoke", "pt2bot.compare", "pt2bot.verdict", "pt2bot.report",
                "pt2bot.publish", "pt2bot.audit", "pt2bot.pipeline", "pt2bot.shard")

# (importer prefixes, forbidden import prefixes, allowed exceptions)
LAYERS = [
    # `pt2bot check` runs without torch, PyGithub or the smoke run's code; it prints through
    # the one findings renderer.
    (STATIC_SIDE, LATER_STAGES, ("pt2bot.report.findings_text", "pt2bot.report.sarif",
                                 "pt2bot.report.escape", "pt2bot.report")),
    # renderers turn a report into text; they never post, run models or read history
    (("pt2bot.report",), ("pt2bot.publish", "pt2bot.smoke", "pt2bot.audit", "pt2bot.pipeline",
                          "pt2bot.shard", "pt2bot.compare", "pt2bot.static", "pt2bot.analysis"), ()),
    # the privileged publisher reads a finished report directory: no analysis code at all,
    # and report.json as untrusted data, never through the typed report
    (("pt2bot.publish",), ("pt2bot.smoke", "pt2bot.rules", "pt2bot.analysis", "pt2bot.static", "pt2bot.compare",
                           "pt2bot.audit", "pt2bot.pipeline", "pt2bot.shard", "pt2bot.select",
                           "pt2bot.reportdata"), ()),
    # `pt2bot merge` of partial directories ends as the unsharded review and audit do: through
    # pipeline.finish_review and audit.run.finish_audit, never storing, rendering or posting
    # by itself; what a shard wrote reaches its log through the one escape
    (("pt2bot.shard",), ("pt2bot.publish", "pt2bot.report", "pt2bot.audit", "pt2bot.smoke"),
     ("pt2bot.audit.run", "pt2bot.report.escape")),
    # the data models depend on nothing but errors and the (leaf) sample statistics, and the
    # results file's one reader reads through jsonio (which imports only errors)
    (("pt2bot.results", "pt2bot.findings", "pt2bot.gb", "pt2bot.errors"),
     ("pt2bot",), ("pt2bot.errors", "pt2bot.stats", "pt2bot.jsonio")),
    # the typed report is data between compare and the renderers: built of the data models
    (("pt2bot.reportdata",), ("pt2bot",), ("pt2bot.findings", "pt2bot.results", "pt2bot.jsonio")),
]


@pytest.mark.parametrize("importers,forbidden,allowed", LAYERS,
                         ids=["static", "report", "publish", "shard", "data-models", "report-data"])
def test_layering(importers, forbidden, allowed):
    bad = [f"{e.src}:{e.line} imports {e.dst}" for e in EDGES
           if _in(e.src, *importers) and _in(e.dst, *forbidden) and not _in(e.dst, *importers)
           and e.dst not in allowed]
    assert bad == []


def test_torch_is_imported_only_inside_functions_outside_the_worker():
    # `pt2bot check`, the renderers and the publisher must load without torch installed
    import ast
    offenders = []
    for mod, path in MODULES.items():
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for node in tree.body:      # module level only
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "torch" or n.startswith("torch.") for n in names):
                offenders.append(f"{mod}:{node.lineno}")
    assert offenders == []


def test_report_imports_nothing_that_imports_report():
    # The renderers sit above the stages they render: a module outside report/ that report/
    # imports must not import report/ back (not even lazily, which only hides the arrow).
    importers = {e.src for e in EDGES if _in(e.dst, "pt2bot.report") and not _in(e.src, "pt2bot.report")}
    upward = [f"{e.src}:{e.line} imports {e.dst}" for e in EDGES
              if _in(e.src, "pt2bot.report") and e.dst in importers]
    assert upward == []


def test_every_escape_is_defined_in_report_escape_only():
    # One home for the escapes of untrusted text (docs/architecture.md): a second definition
    # elsewhere (the publisher's re-escaping once lived in publish/artifact.py) is a sink the
    # security tests of report/escape.py do not cover.
    import ast
    with open(MODULES["pt2bot.report.escape"], encoding="utf-8") as fh:
        escape = ast.parse(fh.read())
    names = {n.name for n in escape.body if isinstance(n, ast.FunctionDef)}
    assert {"sanitize_markdown", "suggestion_fences", "clean_text", "inert_markdown"} <= names
    elsewhere = []
    for mod, path in MODULES.items():
        if mod == "pt2bot.report.escape":
            continue
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        elsewhere += [f"{mod}:{n.lineno} {n.name}" for n in ast.walk(tree)
                      if isinstance(n, ast.FunctionDef) and n.name in names]
    assert elsewhere == []

# --------------------------------------------------------------------------------------------
# docs/architecture.md's table of packages and modules, held to the imports

def _table_rows() -> list[tuple[list[str], list[str]]]:
    """(modules, may-import) of each row of the table: the backticked names of its first and
    last column, as pt2bot-relative module names (`smoke/` -> `smoke`, `report.escape`)."""
    import re

    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("## Packages and modules", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("module", "---") or set(cells[0]) <= set("-"):
            continue

        def names(cell: str) -> list[str]:
            # module names only: a cell may also quote an option (`--base`) or a file
            return [n.removesuffix(".py").rstrip("/").replace("/", ".")
                    for n in re.findall(r"`([a-z_][a-z0-9_./]*)`", cell)]
        rows.append((names(cells[0]), [] if cells[2].startswith("nothing") else names(cells[2])))
    return rows


ROWS = _table_rows()


def _row_of(module: str) -> int | None:
    """The row whose module (or package) is the longest prefix of `module`."""
    best, best_len = None, -1
    for i, (mods, _) in enumerate(ROWS):
        for m in mods:
            full = f"pt2bot.{m}"
            if (module == full or module.startswith(full + ".")) and len(full) > best_len:
                best, best_len = i, len(full)
    return best


def test_every_module_has_a_row_in_the_table():
    assert len(ROWS) > 10
    missing = [m for m in MODULES if m != "pt2bot" and _row_of(m) is None]
    assert missing == []


def test_the_table_says_what_each_module_may_import_and_it_is_all_used():
    # Each import across rows must be one the importer's row lists, and each name a row lists
    # must be imported by a module of that row: the table neither hides an edge nor keeps a
    # stale one. Imports within a row (a package's own modules) are the row's business.
    allowed_used: set[tuple[int, str]] = set()
    hidden = []
    for e in EDGES:
        src, dst = _row_of(e.src), _row_of(e.dst)
        if e.dst == "pt2bot" or src is None or src == dst:
            continue
        hits = [a for a in ROWS[src][1] if _in(e.dst, f"pt2bot.{a}")]
        if hits:
            allowed_used.update((src, a) for a in hits)
        else:
            hidden.append(f"{e.src}:{e.line} imports {e.dst}, not in the row of {ROWS[src][0]}")
    assert hidden == []
    stale = [f"{ROWS[i][0]} lists {a}" for i, (_, allows) in enumerate(ROWS) for a in allows
             if (i, a) not in allowed_used]
    assert stale == []
