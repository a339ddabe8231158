"""What the fix recipes share: find a finding's statement, its own lines and indentation, and
apply a `Candidate` to a source text.

A recipe only replaces the lines of one statement, so everything here works on a statement
that owns its lines (nothing else before it on its first line, nothing but a comment after it
on its last line): `a = 1; print(a)` or `if x: print(x)` get no candidate.
"""
from __future__ import annotations

import ast
import dataclasses
import io
import re
import tokenize
from collections import Counter
from functools import lru_cache

from pt2bot.analysis.model import dotted, import_bindings
from pt2bot.rules.base import Candidate

_INDENT = re.compile(r"[ \t]*")


def source_lines(source: str) -> list[str]:
    """The lines of `source` without their line endings (the numbering `ast` uses)."""
    return [line.rstrip("\r\n") for line in source.splitlines(keepends=True)] if source else []


def _to_char(line: str, byte_col: int) -> int:
    """`ast` columns count UTF-8 bytes; the character index of one in `line`."""
    return len(line.encode("utf-8", "surrogateescape")[:byte_col].decode("utf-8", "surrogateescape"))


def statement_at(tree: ast.Module, line: int, col: int) -> tuple[ast.stmt | None, list[ast.stmt]]:
    """The innermost statement whose span holds (line, col) and the body list it sits in."""
    found: tuple[ast.stmt | None, list[ast.stmt]] = (None, [])
    bodies: list[list[ast.stmt]] = [tree.body]
    while bodies:
        body = bodies.pop()
        for st in body:
            end = (st.end_lineno or st.lineno, st.end_col_offset or 0)
            if (st.lineno, st.col_offset) <= (line, col) <= end:
                found = (st, body)
                bodies = [b for name in ("body", "orelse", "finalbody")
                          for b in (getattr(st, name, None),) if isinstance(b, list) and b]
                bodies += [h.body for h in getattr(st, "handlers", ())]
                bodies += [c.body for c in getattr(st, "cases", ())]
                break
    return found


def owns_lines(lines: list[str], st: ast.stmt) -> bool:
    """Nothing but indentation before `st` on its first line, nothing but a comment after it."""
    end = st.end_lineno or st.lineno
    if not (0 < st.lineno <= end <= len(lines)):
        return False
    first, last = lines[st.lineno - 1], lines[end - 1]
    if first[:_to_char(first, st.col_offset)].strip():
        return False
    rest = last[_to_char(last, st.end_col_offset or 0):].strip()
    return not rest or rest.startswith("#")


def indentation(lines: list[str], st: ast.stmt) -> str:
    return _INDENT.match(lines[st.lineno - 1]).group()   # type: ignore[union-attr]


def indent_unit(indent: str, lines: list[str] | None = None) -> str:
    """One more level in the file's style: a tab where the block is indented with tabs, else
    as many spaces as the file's blocks step in (`lines`: recurrentgemma indents by 2, and a
    suggestion nested by 4 there read as another author's)."""
    if "\t" in indent:
        return "\t"
    return " " * (_indent_step(tuple(lines)) if lines else 4)


@lru_cache(maxsize=32)
def _indent_step(lines: tuple[str, ...]) -> int:
    """The step most of the file's blocks indent by: from each line ending in `:` to the next
    line with code (4 where none says)."""
    steps: Counter = Counter()
    code = [(len(ln) - len(ln.lstrip(" ")), ln.strip()) for ln in lines
            if ln.strip() and not ln.lstrip().startswith("#")]
    for (depth, text), (nxt, _) in zip(code, code[1:]):
        if text.endswith(":") and 0 < nxt - depth <= 8:
            steps[nxt - depth] += 1
    return steps.most_common(1)[0][0] if steps else 4


def spans_string_lines(st: ast.AST) -> bool:
    """Whether a string literal in `st` runs over more than one line (re-indenting its
    continuation lines would change the string)."""
    return any(isinstance(n, (ast.Constant, ast.JoinedStr)) and (n.end_lineno or n.lineno) > n.lineno
               for n in ast.walk(st))


def nested(lines: list[str], st: ast.stmt, extra: str) -> list[str]:
    """The statement's lines one level deeper. Continuation lines move too, except where a
    string literal spans lines (inside brackets or after a backslash their indentation is free,
    so leaving them is still valid Python and the string stays the same)."""
    end = st.end_lineno or st.lineno
    own = lines[st.lineno - 1:end]
    if spans_string_lines(st):
        return [extra + own[0]] + own[1:]
    return [extra + ln if ln.strip() else ln for ln in own]


def import_targets(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted target of the module's top-level absolute imports (`import time as
    t`: "t" -> "time"; `from warnings import warn`: "warn" -> "warnings.warn")."""
    return {name: target for st in tree.body if isinstance(st, (ast.Import, ast.ImportFrom))
            and not getattr(st, "level", 0) for name, target in import_bindings(st, "")}


def call_target(func: ast.AST, targets: dict[str, str]) -> str | None:
    """The dotted name a call's `func` refers to through `targets` (`import_targets`), or None
    where its first name is no import (a local, a parameter, a builtin)."""
    name = dotted(func)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    target = targets.get(head)
    return None if target is None else (f"{target}.{rest}" if rest else target)


def module_names(tree: ast.Module, module: str) -> list[str]:
    """The names the module binds to top-level package `module` at its top level, in order:
    `import numpy as np` -> "np", `import torch` / `import torch.nn` -> "torch"."""
    out = []
    for st in tree.body:
        if isinstance(st, ast.Import):
            for a in st.names:
                if a.asname is None and a.name.split(".")[0] == module:
                    out.append(module)
                elif a.asname is not None and a.name == module:
                    out.append(a.asname)
    return out


def binds_torch(tree: ast.Module) -> bool:
    """Whether the module binds a name to torch at its top level (`import torch`, `import
    torch.nn`, `import torch as th`), so a recipe may write `torch.` without adding an import:
    `fix_candidates_explained` writes the file's own name for it (`torch_alias`)."""
    return torch_alias(tree) is not None


def torch_alias(tree: ast.Module) -> str | None:
    """The name the module binds torch to at its top level: "torch" where it is that
    (`import torch`), else its first alias (`import torch as th`, openai's guided-diffusion),
    None where it binds none."""
    names = module_names(tree, "torch")
    return "torch" if "torch" in names else next(iter(names), None)


def with_torch_as(cand: Candidate, alias: str) -> Candidate | None:
    """`cand` (and its variants) with the `torch.` the recipes write as `alias.`, in a file
    that binds torch only as `alias` (`import torch as th`); only the name `torch` in code is
    renamed, not in a string or a comment. None where the new lines do not tokenize."""
    text = "\n".join(cand.lines) + "\n"
    spots: list[tuple[int, int]] = []
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    for a, b in zip(toks, toks[1:]):
        if a.type == tokenize.NAME and a.string == "torch" and b.type == tokenize.OP and b.string == "." \
                and a.end == b.start:
            spots.append(a.start)
    lines = list(cand.lines)
    for row, col in sorted(spots, reverse=True):
        ln = lines[row - 1]
        lines[row - 1] = ln[:col] + alias + ln[col + len("torch"):]
    variants = tuple(v for v in (with_torch_as(v, alias) for v in cand.variants) if v is not None)
    return dataclasses.replace(cand, lines=tuple(lines), variants=variants)


def module_binds(tree: ast.Module, name: str) -> bool:
    """Whether the module's top level binds `name` (a def, a class, an import, an assignment)."""
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and st.name == name:
            return True
        if isinstance(st, (ast.Import, ast.ImportFrom)) and \
                any((a.asname or a.name.split(".")[0]) == name for a in st.names):
            return True
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(n, ast.Name) and n.id == name
                for t in (st.targets if isinstance(st, ast.Assign) else [st.target]) for n in ast.walk(t)):
            return True
    return False


def function_binds(tree: ast.Module, st: ast.stmt, name: str) -> bool:
    """Whether a function enclosing `st` binds `name` itself (a parameter, an assignment), so
    the module-level meaning of `name` is not the one in scope there."""
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and \
                fn.lineno <= st.lineno <= (fn.end_lineno or fn.lineno):
            args = fn.args
            params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
            params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
            if name in params:
                return True
            for n in ast.walk(fn):
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
                    return True
                if isinstance(n, (ast.Import, ast.ImportFrom)) and \
                        any((a.asname or a.name.split(".")[0]) == name for a in n.names):
                    return True
    return False


def replace_statement(code: str, path: str, st: ast.stmt, new: list[str], title: str, *,
                      safe: bool, guards: tuple[str, ...] = (), rank: int = 0) -> Candidate:
    return Candidate(code=code, path=path, start_line=st.lineno, end_line=st.end_lineno or st.lineno,
                     lines=tuple(new), title=title, safe=safe, guards=guards, rank=rank)


def apply_candidate(source: str, cand: Candidate) -> str:
    """`source` with lines `cand.start_line..cand.end_line` replaced by `cand.lines`, each
    written with the line ending the replaced lines had (the file's last line keeps having none
    if it had none). ValueError when the range is not inside the file."""
    kept = source.splitlines(keepends=True)
    if not (1 <= cand.start_line <= cand.end_line <= len(kept)):
        raise ValueError(f"{cand.path}: lines {cand.start_line}-{cand.end_line} are not inside the file "
                         f"({len(kept)} lines)")
    if any("\n" in ln or "\r" in ln for ln in cand.lines):
        raise ValueError(f"{cand.path}: a replacement line holds a line break")
    last = kept[cand.end_line - 1]
    ending = last[len(last.rstrip("\r\n")):]
    if not ending:   # the file's last line without a newline: the others' ending, none at the end
        first = kept[0]
        inner = first[len(first.rstrip("\r\n")):] or "\n"
        new = [ln + inner for ln in cand.lines[:-1]] + list(cand.lines[-1:])
        if not new and cand.start_line > 1:   # deleting the last lines: the line before ends the file
            prev = kept[cand.start_line - 2]
            kept[cand.start_line - 2] = prev.rstrip("\r\n")
    else:
        new = [ln + ending for ln in cand.lines]
    return "".join(kept[:cand.start_line - 1] + new + kept[cand.end_line:])




def comment_lines(source: str) -> set[int]:
    """The numbers of the lines that hold a comment and nothing else (a `#` inside a string is
    none); empty where the source does not tokenize."""
    out: set[int] = set()
    code: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out.add(tok.start[0])
            elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                  tokenize.ENDMARKER):
                code.update(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return set()
    return out - code


def keep_comments(source: str, cand: Candidate, comments: set[int] | None = None) -> Candidate:
    """`cand` keeping the comments of the lines it replaces, where it rewrites them: a line of
    them that holds only a comment goes before the new lines at their indentation. A one-click
    suggestion that replaced `if t.max() > 1:` and the comment in its block saying why the
    times are scaled by one `torch.where` line deleted the author's comment with the branch.
    Only for a rewrite, an edit that writes none of the replaced code lines again: an edit that
    keeps some of them and drops the rest (one arm of an `if`/`else` kept, a guard dropped,
    a call wrapped) keeps what it keeps, and a comment above dropped code describes code that
    is gone. A deletion (no new lines) keeps none either."""
    if not cand.lines or cand.setting:
        return cand
    comments = comment_lines(source) if comments is None else comments
    lines = source.splitlines()
    span = range(cand.start_line, cand.end_line + 1)
    code = {lines[n - 1].strip() for n in span if n not in comments} - {""}
    written = {ln.strip() for ln in cand.lines}
    rewrite = not written & code
    # (a recipe that writes a comment of the span again, the lines between the statements it
    # rewrites, has placed it)
    kept = [lines[n - 1].strip() for n in span
            if rewrite and n in comments and lines[n - 1].strip() not in written]
    variants = tuple(keep_comments(source, v, comments) for v in cand.variants)
    if not kept:
        return dataclasses.replace(cand, variants=variants) if variants != cand.variants else cand
    first = cand.lines[0]
    indent = first[:len(first) - len(first.lstrip())]
    return dataclasses.replace(cand, lines=tuple(indent + c for c in kept) + cand.lines, variants=variants)


def finding_statement(finding, source: str, tree: ast.Module) -> tuple[ast.stmt | None, list[ast.stmt], list[str]]:
    """The statement a finding is on (None unless it owns its lines), its body, and the lines."""
    lines = source_lines(source)
    st, body = statement_at(tree, finding.line, finding.col)
    if st is None or not owns_lines(lines, st):
        return None, [], lines
    return st, body, lines


def statement_in_function(finding, source: str, tree: ast.Module):
    """The lines, the finding's statement and the function around it, where the recipes may
    write `torch.` there (the file imports it and the function does not rebind it); None
    otherwise."""
    lines = source_lines(source)
    st, _body = statement_at(tree, finding.line, finding.col)
    if st is None or not binds_torch(tree) or function_binds(tree, st, "torch"):
        return None
    fn = enclosing_function(tree, st)
    return None if fn is None else (lines, st, fn)


def header_edit(code: str, finding, st: ast.If, lines: list[str], new_test: str, title: str, guards,
                rank: int, safe: bool = False) -> Candidate:
    """`st`'s header (an `if` or an `elif`) with its test replaced by `new_test`, the block's
    lines unchanged."""
    start, end = node_span(st.test)
    new = replace_spans(lines, st.lineno, end[0], [(start, end, new_test)])
    return Candidate(code=code, path=finding.path, start_line=st.lineno, end_line=end[0], lines=tuple(new),
                     title=title, safe=safe, guards=guards, rank=rank)


def guard_eager_only(code: str, finding, source: str, tree: ast.Module, what: str) -> list[Candidate]:
    """For a call made for its side effect only (`print`, a log line, a warning): guard it with
    `if not torch.compiler.is_compiling():` (safe: in eager that test is False, so the call runs
    exactly as before) and, second, remove it (not safe: eager no longer prints)."""
    st, body, lines = finding_statement(finding, source, tree)
    if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)
            and (st.value.lineno, st.value.col_offset) == (finding.line, finding.col)):
        return []
    out = []
    indent = indentation(lines, st)
    if binds_torch(tree) and not function_binds(tree, st, "torch"):
        out.append(replace_statement(
            code, finding.path, st,
            [f"{indent}if not torch.compiler.is_compiling():"] + nested(lines, st, indent_unit(indent, lines)),
            f"run the {what} in eager only: guard it with `torch.compiler.is_compiling()`", safe=True))
    out.append(replace_statement(code, finding.path, st, [f"{indent}pass"] if len(body) == 1 else [],
                                 f"remove the {what}", safe=False, rank=1))
    return out


def segment(lines: list[str], node: ast.AST) -> str:
    """The source text of `node` (lines joined with "\n"), as `ast.get_source_segment` gives it."""
    end = node.end_lineno or node.lineno
    first, last = node.lineno - 1, end - 1
    if first == last:
        ln = lines[first]
        return ln[_to_char(ln, node.col_offset):_to_char(ln, node.end_col_offset or 0)]
    parts = [lines[first][_to_char(lines[first], node.col_offset):]] + lines[first + 1:last]
    parts.append(lines[last][:_to_char(lines[last], node.end_col_offset or 0)])
    return "\n".join(parts)


def with_replaced(lines: list[str], st: ast.stmt, node: ast.AST, text: str) -> list[str]:
    """The lines of statement `st` with the span of `node` (inside it) replaced by `text`
    (which may hold "\n": it sits inside the statement's brackets or ends it)."""
    end = st.end_lineno or st.lineno
    n_end = node.end_lineno or node.lineno
    head = lines[node.lineno - 1][:_to_char(lines[node.lineno - 1], node.col_offset)]
    tail = lines[n_end - 1][_to_char(lines[n_end - 1], node.end_col_offset or 0):]
    return lines[st.lineno - 1:node.lineno - 1] + (head + text + tail).split("\n") + lines[n_end:end]


def replace_spans(lines: list[str], first: int, last: int,
                  edits: list[tuple[tuple[int, int], tuple[int, int], str]]) -> list[str]:
    """Lines `first..last` (1-based) with each edit's span, from (line, col) to (line, col) in
    `ast`'s numbering (columns in UTF-8 bytes), replaced by its text. The spans must not
    overlap; a text may hold "\n" only where a line break is valid there."""
    text = "\n".join(lines[first - 1:last])
    starts = [0]
    for ln in lines[first - 1:last - 1]:
        starts.append(starts[-1] + len(ln) + 1)

    def at(pos: tuple[int, int]) -> int:
        line, col = pos
        return starts[line - first] + _to_char(lines[line - 1], col)

    spans = sorted(((at(a), at(b), t) for a, b, t in edits), reverse=True)
    for (a, b, _t), (a2, b2, _t2) in zip(spans[1:], spans):
        if b > a2:
            raise ValueError("overlapping edits")
    for a, b, t in spans:
        text = text[:a] + t + text[b:]
    return text.split("\n")


def node_span(node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    """(start, end) of `node` as `replace_spans` takes them."""
    return (node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0)


def statement_lines(indent: str, text: str) -> list[str]:
    """A new statement `text` (its continuation lines as they are) at `indent`."""
    return (indent + text).split("\n")


def is_elif(lines: list[str], st: ast.stmt) -> bool:
    """An `if` that is the `elif` of another (its lines are not a statement of their own)."""
    ln = lines[st.lineno - 1]
    return isinstance(st, ast.If) and ln[_to_char(ln, st.col_offset):].startswith("elif")


def parents_of(root: ast.AST) -> dict[int, ast.AST]:
    """id(node) -> its parent, for the nodes under `root`."""
    return {id(c): n for n in ast.walk(root) for c in ast.iter_child_nodes(n)}


def enclosing_function(tree: ast.Module, st: ast.stmt) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function whose lines hold `st`."""
    fns = [fn for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
           and fn.lineno <= st.lineno <= (fn.end_lineno or fn.lineno)]
    return max(fns, key=lambda f: f.lineno) if fns else None


def next_if_testing(tree: ast.Module, st: ast.stmt, name: str) -> ast.If | None:
    """The `if` right after `st` whose test reads `name`, where the function holding them
    reads `name` nowhere outside that `if` (not after it, nor earlier in a loop); None
    otherwise. A number bound only to be tested there can change form with the test."""
    _, body = statement_at(tree, st.lineno, st.col_offset)
    i = next((k for k, s in enumerate(body) if s is st), None)
    nxt = body[i + 1] if i is not None and i + 1 < len(body) else None
    fn = enclosing_function(tree, st)
    if not isinstance(nxt, ast.If) or fn is None or \
            not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(nxt.test)):
        return None
    end = nxt.end_lineno or nxt.lineno
    if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
           and not nxt.lineno <= n.lineno <= end for n in ast.walk(fn)):
        return None
    return nxt


def parameter_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The names of `fn`'s parameters, `*args` and `**kwargs` left out."""
    return [a.arg for a, _default in parameters(fn)]


def parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.arg, ast.expr | None]]:
    """`fn`'s parameters with their defaults (None: no default), `*args` and `**kwargs` left out."""
    args = fn.args
    positional = args.posonlyargs + args.args
    pad: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    return list(zip(positional, pad + list(args.defaults))) + list(zip(args.kwonlyargs, args.kw_defaults))


def defined_before(tree: ast.Module, st: ast.stmt, name: str) -> bool:
    """Whether `name` is a parameter of the function around `st` or assigned in it before `st`."""
    fn = enclosing_function(tree, st)
    if fn is None:
        return False
    if name in parameter_names(fn):
        return True
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               and n.lineno < st.lineno for n in ast.walk(fn))


# torch functions and tensor methods whose result is a tensor of truth values (a test the
# recipes can hand to `torch.where` or `torch._assert_async` as it is)
BOOL_FUNCS = frozenset({"any", "all", "isclose", "isnan", "isinf", "isfinite", "isposinf",
                        "isneginf", "isreal", "signbit", "logical_and", "logical_or",
                        "logical_not", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge",
                        "greater", "greater_equal", "less", "less_equal", "not_equal"})


_PURE = (ast.Name, ast.Attribute, ast.Constant, ast.Compare, ast.BinOp, ast.UnaryOp, ast.Load, ast.cmpop,
         ast.operator, ast.unaryop)


def pure(node: ast.AST) -> bool:
    """Names, attributes, constants and comparisons or arithmetic of them: reading it twice
    computes the same thing (no call, so no random draw or side effect)."""
    return all(isinstance(n, _PURE) for n in ast.walk(node))


def pure_indexed(node: ast.AST) -> bool:
    """`pure`, indexing and slicing allowed too (`quat[:, 3] < 0`, `codebooks[1]`): reading it
    twice still reads the same elements."""
    return all(isinstance(n, _PURE + (ast.Subscript, ast.Slice, ast.Tuple, ast.Store)) for n in ast.walk(node))


def int_constant(node: ast.AST) -> int | None:
    """The value of an int constant, `-1` included (not a bool), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = int_constant(node.operand)
        return None if v is None else -v
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


# functions not defined, or not finite, everywhere (a division by 0, the log of 0): computed on
# the elements the mask leaves out, they give inf or NaN there, which `torch.where` drops in the
# forward pass and not in backward (0 times inf is NaN)
PARTIAL = frozenset({"log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "pow", "div", "true_divide",
                     "floor_divide", "remainder", "fmod", "acos", "asin", "atanh", "acosh", "digamma", "lgamma",
                     "polygamma", "erfinv", "logit", "xlogy", "tan"})


def partial_domain(value: ast.AST) -> bool:
    """Whether `value` divides, or calls a function of `PARTIAL`: computed on values a mask
    left out (a zero denominator where the mask selects nonzero ones), it may be inf or NaN,
    and `torch.where` then passes NaN to the gradients. torchmetrics' R2 with a constant target
    column (`tss` 0 where `cond` is false) is one: `1 - rss / tss` computed over every column."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod, ast.Pow))
               or isinstance(n, ast.Call) and (isinstance(n.func, ast.Attribute) and n.func.attr in PARTIAL
                                               or isinstance(n.func, ast.Name) and n.func.id in PARTIAL)
               for n in ast.walk(value))


# the text of each augmented assignment's operator (`x *= v` is `x = x * v`)
BIN_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
           ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}


def identifiers(tree: ast.Module) -> set[str]:
    """Every name the file binds or reads (a fresh local must shadow none of them)."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
    return out


def fresh_name(taken: set[str], base: str) -> str:
    """`base`, with `_` appended until no name in `taken` is it; then taken too."""
    name = base
    while name in taken:
        name += "_"
    taken.add(name)
    return name


__all__ = ["BOOL_FUNCS", "BIN_OPS", "parameter_names", "parameters", "pure", "pure_indexed", "identifiers", "fresh_name", "module_binds", "module_names", "replace_spans", "node_span", "parents_of", "enclosing_function", "segment", "with_replaced", "statement_lines", "is_elif", "defined_before", "source_lines", "statement_at", "owns_lines", "indentation", "indent_unit", "nested",
           "spans_string_lines", "binds_torch", "function_binds", "replace_statement", "apply_candidate",
           "finding_statement", "guard_eager_only", "header_edit", "next_if_testing", "statement_in_function"]
