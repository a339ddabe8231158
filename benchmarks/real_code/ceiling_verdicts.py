"""How benchmarks/real_code/ceiling.json was written: the hand verdicts of the real-code
benchmark's open sites (bench_realcode_ceiling.py), as code.

    /work/venvs/realcode/bin/python benchmarks/real_code/ceiling_verdicts.py

The open sites are read from benchmarks/results/realcode_proof_e8bcb3f.json (the main set's
models, those of benchmarks/results/realcode_proof.json: 136 of 166 sites without a verified
fix); each edit's `old` lines are cut from the installed library (the benchmark venv's
site-packages, the same files the proof copies) by line range, and `new` is `old` with the
replacements given. The verdicts were written without reading pt2bot's recipes.
"""
import collections
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SP = os.path.join(os.environ.get("REALCODE_VENV", "/work/venvs/realcode"), "lib", "python3.11", "site-packages") + "/"


def open_sites():
    d = json.load(open(os.path.join(ROOT, "benchmarks/results/realcode_proof_e8bcb3f.json")))
    keys = set(json.load(open(os.path.join(ROOT, "benchmarks/results/realcode_proof.json")))["models"])
    sites = {}
    for k, m in d["models"].items():
        if k not in keys:
            continue
        for u in m.get("unlocated") or ():
            s = sites.setdefault((m["lib"], u["path"], u["reported_line"]),
                                 {"gb": u.get("gb"), "source": "", "verified": False, "models": []})
            s["models"].append(k)
        for t in m.get("targets") or ():
            s = sites.setdefault((m["lib"], t["path"], t["line"]),
                                 {"gb": t.get("gb"), "source": t.get("source"), "verified": False, "models": []})
            s["verified"] |= bool(t.get("fixed_by"))
            s["models"].append(k)
    return [{"lib": lib, "path": p, "line": ln, **s} for (lib, p, ln), s in sorted(sites.items()) if not s["verified"]]


EDITS = {}
V = {}


def edit(name, path, old, new, pattern, why, guards=(), model=None, caveat=None):
    EDITS[name] = {"path": path, "old": old.split("\n"), "new": new.split("\n"), "guards": list(guards),
                   "pattern": pattern, "why": why, **({"model": model} if model else {}),
                   **({"caveat": caveat} if caveat else {})}


def site(lib, path, line, verdict, why=None, edit=None, outside=None):
    V[f"{lib} {path}:{line}"] = {"verdict": verdict, **({"why": why} if why else {}),
                                 **({"edit": edit} if edit else {}), **({"outside": outside} if outside else {})}


def block(path, first, last):
    """the exact lines first..last (1-based) of the library file"""
    return "\n".join(open(SP + path).read().split("\n")[first - 1:last])


def subedit(name, path, first, last, subs, pattern, why, **kw):
    old = block(path, first, last)
    new = old
    for a, b in subs:
        assert a in new, (name, a)
        new = new.replace(a, b)
    edit(name, path, old, new, pattern, why, **kw)


# ============================================================================ the verdicts
# ---------------------------------------------------------------- reasons (shared, so that they group)
R_DRAW = ("a random draw read back into a Python number (.item()/int()/float()) for Python-level use (a list/dict "
          "index, a transform parameter, a size): keeping torch's draw needs the read-back, which is the break; a "
          "Python or numpy generator changes the draws")
R_DRAW_BRANCH = ("a branch on a random draw whose taken arm draws more random values or builds Python-level "
                 "parameters: running both arms (torch.where) changes the number of draws, skipping needs the branch")
R_DRAW_SHAPE = "a random draw sets an output size (the zoom-out canvas): a data-dependent shape, outputs cannot stay equal at a fixed shape"
R_DYN_OUT = ("the op's result has a data-dependent size that the function returns or that sizes its output "
             "(kept boxes, distinct thresholds, unique tokens, tokens per sequence): no fixed-shape form keeps the outputs")
R_SOLVER = ("a solver or iteration loop whose trip count or step acceptance depends on tensor values, with Python "
            "state and callbacks in the body: no torch.while_loop/torch.where form inside one function keeps it")
R_RECON = ("a reconstruction failure at the call of a solver whose inside breaks (dynamo cannot rebuild the solver "
           "object across them): a consequence of the breaks inside, nothing on this line to edit")
R_PYRNG = ("Python-side random machinery (numpy SeedSequence, an explicitly seeded torch.Generator, the Brownian "
           "interval tree with its LRU cache and trampoline) that dynamo does not trace; any replacement changes the draws "
           "or needs a rewrite of the Brownian interval class")
R_PYINDEX = ("a value read from a tensor into Python control (a Python enum chosen by a tableau tensor, a time order "
             "that picks a wrapper object, an iteration count): any read of the value is a break")
R_ORDER = "a random permutation drives the order of Python calls (a Python loop over `.tolist()`): no fixed-order form keeps the outputs"

# ---------------------------------------------------------------- kornia
K = "kornia"
subedit("canny_while_loop", "kornia/filters/canny.py", 285, 303,
 [("        if is_exporting():", "        if is_exporting() or torch.compiler.is_compiling():")],
 "a data-dependent loop whose torch.while_loop form the function already has: take it when compiling",
 "the hysteresis loop through the function's own torch.while_loop branch (written for export) when compiling; eager keeps its Python loop")
site(K, "kornia/filters/canny.py", 301, "fix", edit="canny_while_loop")
site(K, "kornia/augmentation/_2d/intensity/color_jiggle.py", 95, "none", why=R_ORDER)
subedit("kornia_comprehension_loop", "kornia/augmentation/container/augment.py", 722, 722,
 [("                in_args = [in_args[i] for i in input_first_order]",
   "                in_args = [in_args[input_first_order[i]] for i in range(len(input_first_order))]")],
 "a list comprehension dynamo fails to iterate (GB4347 Missing tp_iternext): index by range instead",
 "the comprehension over a list iterated by index (same elements, same order)")
site(K, "kornia/augmentation/container/augment.py", 722, "fix", edit="kornia_comprehension_loop")

# ---------------------------------------------------------------- entmax
subedit("entmax_unsolved_where", "entmax/activations.py", 133, 140,
 [("""        unsolved = (support_size == k).squeeze(dim)

        if torch.any(unsolved):
            X_ = _roll_last(X, dim)[unsolved]
            tau_, ss_ = _entmax_threshold_and_support(X_, dim=-1, k=2 * k)
            _roll_last(tau_star, dim)[unsolved] = tau_
            _roll_last(support_size, dim)[unsolved] = ss_""",
   """        unsolved = (support_size == k).squeeze(dim)

        # every row through the 2k pass and the unsolved rows' results kept: the rows the masked call solved, at a fixed shape
        tau_, ss_ = _entmax_threshold_and_support(X, dim=dim, k=2 * k)
        tau_star = torch.where(unsolved.unsqueeze(dim), tau_, tau_star)
        support_size = torch.where(unsolved.unsqueeze(dim), ss_, support_size)""")],
 "a masked recursive re-solve of some rows (if any(mask): x[mask] -> f -> out[mask] = ...) as f on all rows and torch.where",
 "the top-k threshold re-solved with 2k for every row (the recursion ends at the full sort) and selected with torch.where",
 caveat="always runs the doubled-k passes (up to a full sort) where head runs them only when a row is unsolved: more work in eager")
for ln in (136, 137):
    site("entmax", "entmax/activations.py", ln, "fix", edit="entmax_unsolved_where")

# ---------------------------------------------------------------- monai
subedit("navit_valid_rows", "monai/networks/nets/navit.py", 582, 583,
 [("""        is_valid = (image_id_range.unsqueeze(0) < num_images_t.unsqueeze(1)).reshape(-1)  # (B * max_queries,)
        pooled = pooled[is_valid]  # (total_images, hidden_size)""",
   """        # the valid queries are each group's first num_images rows, in order (a Python list: no mask needed)
        pooled = torch.cat([pooled[b * max_queries:b * max_queries + n] for b, n in enumerate(num_images_per_group)])""")],
 "a boolean mask whose pattern is known in Python (counts in a list): slices and torch.cat",
 "the padding queries dropped by slicing each group's first num_images rows (num_images_per_group is a Python list)")
site("monai", "monai/networks/nets/navit.py", 583, "fix", edit="navit_valid_rows")
subedit("swin_check_python", "monai/networks/nets/swin_unetr.py", 383, 386,
 [("""        img_size = np.array(spatial_shape)
        remainder = (img_size % np.power(self.patch_size, 5)) > 0
        if remainder.any():
            wrong_dims = (np.where(remainder)[0] + 2).tolist()""",
   """        not_divisible = [int(s) % self.patch_size**5 > 0 for s in spatial_shape]
        if any(not_divisible):
            wrong_dims = [i + 2 for i, r in enumerate(not_divisible) if r]""")],
 "a shape check written with numpy arrays: the same check in plain Python on the ints",
 "the divisibility check on the spatial sizes in Python ints instead of numpy arrays (the same ValueError, the same message)")
site("monai", "monai/networks/nets/swin_unetr.py", 385, "fix", edit="swin_check_python")

# ---------------------------------------------------------------- segmentation-models-pytorch
S = "segmentation-models-pytorch"
site(S, "segmentation_models_pytorch/losses/focal.py", 118, "outside",
     outside="the loss averages over the kept pixels: a masked form needs focal_loss_with_logits (another function, bound in __init__ as a partial) to take a weight/mask and reduce over it")
subedit("lovasz_present_where", "segmentation_models_pytorch/losses/lovasz.py", 131, 146,
 [("""    for c in class_to_sum:
        fg = (labels == c).type_as(probas)  # foreground for class c
        if classes == "present" and fg.sum() == 0:
            continue
""", """    present = []
    for c in class_to_sum:
        fg = (labels == c).type_as(probas)  # foreground for class c
        if classes == "present":
            present.append(fg.sum() > 0)
"""), ("""    return mean(losses)""", """    if classes == "present":
        # an absent class counts for nothing, as if skipped: the mean over the present ones (0 when none is)
        kept = torch.stack(present)
        return torch.where(kept, torch.stack(losses), 0.0).sum() / kept.sum().clamp(min=1)
    return mean(losses)""")],
 "a loop that skips items on a tensor test (if t.sum() == 0: continue) and averages the rest: compute all, mask with torch.where, divide by the count",
 "every class's Lovasz term computed, the absent ones masked out with torch.where and the mean taken over the present count",
 guards=["empty"], caveat="computes the sort for absent classes too")
site(S, "segmentation_models_pytorch/losses/lovasz.py", 133, "fix", edit="lovasz_present_where")
for ln in (164, 165):
    site(S, "segmentation_models_pytorch/losses/lovasz.py", ln, "outside",
         outside="the ignored pixels are dropped before the Lovasz sort: a masked form needs the mask carried into _lovasz_softmax_flat/_lovasz_grad (other functions) to keep the ignored pixels out of the cumulative sums")

# ---------------------------------------------------------------- torchmetrics
T = "torchmetrics"
site(T, "torchmetrics/functional/classification/precision_recall_curve.py", 70, "none", why=R_DYN_OUT)
subedit("prc_check_assert", "torchmetrics/functional/classification/precision_recall_curve.py", 151, 161,
 [("""    unique_values = torch.unique(target, dim=None)
    if ignore_index is None:
        check = torch.any((unique_values != 0) & (unique_values != 1))
    else:
        check = torch.any((unique_values != 0) & (unique_values != 1) & (unique_values != ignore_index))
    if check:
        raise""", """    if ignore_index is None:
        check = torch.any((target != 0) & (target != 1))
    else:
        check = torch.any((target != 0) & (target != 1) & (target != ignore_index))
    if torch.compiler.is_compiling():
        torch._assert_async(torch.logical_not(check), "Detected values in `target` other than 0, 1 and ignore_index")
    elif check:
        unique_values = torch.unique(target, dim=None)
        raise""")],
 "a value check through torch.unique: the same test on the tensor itself, the unique values only for the error message; torch._assert_async when compiling",
 "the binary-target check without torch.unique (the same any() on target), unique only in the raise's message; an async assert when compiling",
 guards=["invalid"])
site(T, "torchmetrics/functional/classification/precision_recall_curve.py", 152, "fix", edit="prc_check_assert")
subedit("pearson_where", "torchmetrics/functional/regression/pearson.py", 140, 145,
 [("""    if valid_mask.any():
        corrcoef[valid_mask] = (
            (corr_xy[valid_mask] / (var_x[valid_mask] * var_y[valid_mask]).sqrt()).squeeze().to(corrcoef.dtype)
        )
        corrcoef = torch.clamp(corrcoef, -1.0, 1.0)""",
   """    # the invalid entries keep nan; their denominator is 1 so that no inf or nan reaches the gradients
    denom = torch.where(valid_mask, var_x * var_y, torch.ones_like(var_x)).sqrt()
    corrcoef = torch.where(valid_mask, (corr_xy / denom).to(corrcoef.dtype), corrcoef)
    corrcoef = torch.clamp(corrcoef, -1.0, 1.0)""")],
 "a masked write under if mask.any(): torch.where with a safe denominator",
 "the masked write of the valid correlations as torch.where (the invalid ones stay nan; clamp leaves nan as it is)",
 guards=["zero", "nan"])
for ln in (141, 143):
    site(T, "torchmetrics/functional/regression/pearson.py", ln, "fix", edit="pearson_where")
subedit("spearman_searchsorted", "torchmetrics/functional/regression/spearman.py", 31, 39,
 [("""    n = data.numel()
    rank = torch.empty_like(data, dtype=torch.int32)
    idx = data.argsort()
    rank[idx[:n]] = torch.arange(1, n + 1, dtype=torch.int32, device=data.device)
    uniq, inv, counts = torch.unique(data, sorted=True, return_inverse=True, return_counts=True)
    sum_ranks = torch.zeros_like(uniq, dtype=torch.int32)
    sum_ranks.scatter_add_(0, inv, rank.to(torch.int32))
    mean_ranks = sum_ranks / counts
    return mean_ranks[inv]""",
   """    # the tied values of x hold ranks lo+1..hi, lo and hi counting the values below and not above it: their mean
    sorted_data = data.sort().values
    lo = torch.searchsorted(sorted_data, data, right=False)
    hi = torch.searchsorted(sorted_data, data, right=True)
    return (lo + hi + 1) / 2""")],
 "ranks with ties averaged through torch.unique: two searchsorted on the sorted values",
 "the mean rank of each value from two torch.searchsorted calls on the sorted data (no torch.unique)")
site(T, "torchmetrics/functional/regression/spearman.py", 35, "fix", edit="spearman_searchsorted")
subedit("mrr_argmax", "torchmetrics/functional/retrieval/reciprocal_rank.py", 58, 62,
 [("""    if not target.sum():
        return tensor(0.0, device=preds.device)

    position = torch.nonzero(target).view(-1)
    return 1.0 / (position[0] + 1.0)""",
   """    # the first relevant position is the first maximum of the 0/1 vector; no relevant document gives 0
    position = (target != 0).int().argmax()
    return torch.where(target.sum() != 0, 1.0 / (position + 1.0), tensor(0.0, device=preds.device))""")],
 "the first nonzero index via nonzero()[0] behind an emptiness test: argmax of the 0/1 vector and torch.where",
 "the first relevant position as argmax of target != 0 (argmax gives the first maximum), and 0 when none is relevant by torch.where",
 guards=["zero"])
for ln in (58, 61):
    site(T, "torchmetrics/functional/retrieval/reciprocal_rank.py", ln, "fix", edit="mrr_argmax")
subedit("retrieval_check_assert", "torchmetrics/utilities/checks.py", 147, 148,
 [("""    if not allow_non_binary_target and (target.max() > 1 or target.min() < 0):
        raise ValueError("`target` must contain `binary` values")""",
   """    if not allow_non_binary_target:
        if torch.compiler.is_compiling():
            torch._assert_async((target.max() <= 1) & (target.min() >= 0), "`target` must contain `binary` values")
        elif target.max() > 1 or target.min() < 0:
            raise ValueError("`target` must contain `binary` values")""")],
 "a data-dependent input check that raises: kept in eager, torch._assert_async when compiling",
 "the binary-target check kept as it is in eager and asserted asynchronously when compiling",
 guards=["invalid"], caveat="compiled code raises RuntimeError (asynchronously) where eager raises ValueError")
site(T, "torchmetrics/utilities/checks.py", 147, "fix", edit="retrieval_check_assert")
EDITS["retrieval_check_assert"]["model"] = "torchmetrics:retrieval_mrr"
subedit("bincount_compile_branch", "torchmetrics/utilities/data.py", 202, 206,
 [("    if torch.are_deterministic_algorithms_enabled() or _XLA_AVAILABLE or x.is_mps:",
   "    if torch.are_deterministic_algorithms_enabled() or _XLA_AVAILABLE or x.is_mps or torch.compiler.is_compiling():")],
 "a data-dependent op whose fixed-shape form the function already has (for XLA/MPS/determinism): take it when compiling",
 "the function's own fixed-size counting (a comparison against arange(minlength)) when compiling; eager keeps bincount",
 caveat="the fixed-size form assumes every value is below minlength (as its XLA/MPS users do); bincount would grow the output")
site(T, "torchmetrics/utilities/data.py", 206, "fix", edit="bincount_compile_branch")

# ---------------------------------------------------------------- torchdiffeq
D = "torchdiffeq"
site(D, "torchdiffeq/_impl/event_handling.py", 11, "none", why=R_PYINDEX)
site(D, "torchdiffeq/_impl/interp.py", 38, "outside",
     outside="the assert as torch._assert_async when compiling needs `torch`, which interp.py does not import (an import is outside the hunk)")
subedit("optimal_step_where", "torchdiffeq/_impl/misc.py", 88, 95,
 [("""    if error_ratio == 0:
        return last_step * ifactor
    if error_ratio < 1:
        dfactor = torch.ones((), dtype=last_step.dtype, device=last_step.device)
""", """    dfactor = torch.where(error_ratio < 1, torch.ones((), dtype=last_step.dtype, device=last_step.device), dfactor)
"""), ("""    return last_step * factor""", """    # a zero error ratio steps up by the full factor, as the early return did
    return last_step * torch.where(error_ratio == 0, ifactor, factor)""")],
 "scalar branches on a tensor (early return, a conditional assignment): torch.where on the values",
 "the zero-error early return and the dfactor choice as torch.where",
 guards=["zero", "nan"])
site(D, "torchdiffeq/_impl/misc.py", 88, "fix", edit="optimal_step_where")
site(D, "torchdiffeq/_impl/misc.py", 270, "none", why=R_PYINDEX)
for ln in (80, 82):
    site(D, "torchdiffeq/_impl/odeint.py", ln, "none", why=R_RECON)
site(D, "torchdiffeq/_impl/rk_common.py", 70, "none", why=R_PYINDEX)
subedit("rk_repeat_assert", "torchdiffeq/_impl/rk_common.py", 233, 234,
 [("""        if (counts > 1).any():
            raise""", """        if torch.compiler.is_compiling():
            torch._assert_async(torch.logical_not((counts > 1).any()), "`step_t` and `jump_t` must not have any repeated elements between them.")
        elif (counts > 1).any():
            raise""")],
 "a data-dependent input check that raises: kept in eager, torch._assert_async when compiling",
 "the repeated-times check kept in eager and asserted asynchronously when compiling",
 guards=["invalid"])
site(D, "torchdiffeq/_impl/rk_common.py", 233, "fix", edit="rk_repeat_assert")
for ln in (238, 239):
    site(D, "torchdiffeq/_impl/rk_common.py", ln, "outside",
         outside="bisect on .tolist() as torch.searchsorted(...).clamp(max=len - 1) makes the index a tensor: _adaptive_step's index tests and increments (another function) must become tensor ops")
for ln in (244, 245, 252, 257, 258, 336):
    site(D, "torchdiffeq/_impl/rk_common.py", ln, "none", why=R_SOLVER)
subedit("rk_step_asserts", "torchdiffeq/_impl/rk_common.py", 284, 285,
 [("""        assert t0 + dt > t0, 'underflow in dt {}'.format(dt.item())
        assert torch.isfinite(y0).all(), 'non-finite values in state `y`: {}'.format(y0)""",
   """        if torch.compiler.is_compiling():
            torch._assert_async(t0 + dt > t0, 'underflow in dt')
            torch._assert_async(torch.isfinite(y0).all(), 'non-finite values in state `y`')
        else:
            assert t0 + dt > t0, 'underflow in dt {}'.format(dt.item())
            assert torch.isfinite(y0).all(), 'non-finite values in state `y`: {}'.format(y0)""")],
 "an assert on a tensor: kept in eager, torch._assert_async when compiling",
 "the step's asserts kept in eager and asserted asynchronously when compiling",
 guards=["nan", "inf"], caveat="the compiled asserts also run under python -O")
for ln in (284, 285):
    site(D, "torchdiffeq/_impl/rk_common.py", ln, "fix", edit="rk_step_asserts")
site(D, "torchdiffeq/_impl/solvers.py", 91, "none", why=R_PYINDEX)
subedit("grid_assert", "torchdiffeq/_impl/solvers.py", 104, 104,
 [("""        assert time_grid[0] == t[0] and time_grid[-1] == t[-1]""",
   """        if torch.compiler.is_compiling():
            torch._assert_async((time_grid[0] == t[0]) & (time_grid[-1] == t[-1]))
        else:
            assert time_grid[0] == t[0] and time_grid[-1] == t[-1]""")],
 "an assert on a tensor: kept in eager, torch._assert_async when compiling",
 "the grid's end check kept in eager and asserted asynchronously when compiling",
 guards=["invalid"])
site(D, "torchdiffeq/_impl/solvers.py", 104, "fix", edit="grid_assert")
site(D, "torchdiffeq/_impl/solvers.py", 117, "none", why=R_SOLVER)
subedit("linear_interp_where", "torchdiffeq/_impl/solvers.py", 176, 181,
 [("""        if t == t0:
            return y0
        if t == t1:
            return y1
        slope = (t - t0) / (t1 - t0)
        return y0 + slope * (y1 - y0)""", """        slope = (t - t0) / (t1 - t0)
        # t on an end gives that end's value exactly, as the early returns did
        return torch.where(t == t0, y0, torch.where(t == t1, y1, y0 + slope * (y1 - y0)))""")],
 "early returns on a scalar tensor test: torch.where on the returned values",
 "the interpolation's exact-end returns as torch.where", guards=["zero"])
for ln in (176, 178):
    site(D, "torchdiffeq/_impl/solvers.py", ln, "fix", edit="linear_interp_where")

# ---------------------------------------------------------------- torchsde
E = "torchsde"
for ln in (31, 32, 183, 336, 339, 551, 552):
    site(E, "torchsde/_brownian/brownian_interval.py", ln, "none", why=R_PYRNG)
for ln in (596, 597):
    site(E, "torchsde/_brownian/brownian_interval.py", ln, "none",
         why="query times read into Python floats for the Brownian interval tree's Python search and cache: the tree is Python objects keyed by float times")
for ln in (32, 45):
    site(E, "torchsde/_core/base_sde.py", ln, "outside",
         outside="an nn.Module (the SDE wrapper) constructed inside the compiled call: building it outside (sdeint's caller) or BaseSDE not being an nn.Module, neither inside this __init__")
site(E, "torchsde/_core/better_abc.py", 34, "outside",
     outside="an instance created through a custom ABCMeta.__call__ inside the compiled call (the Brownian interval): create it before the compiled call, in the caller")
site(E, "torchsde/_core/base_solver.py", 115, "none", why=R_SOLVER)
site(E, "torchsde/_core/interp.py", 16, "outside",
     outside="the chained assert as torch._assert_async when compiling needs `torch`, which interp.py does not import")
site(E, "torchsde/_core/misc.py", 47, "outside",
     outside="a tensor-valued test returned as a Python bool to the caller's `if not ...: raise` (sdeint.py:165): the check must become torch._assert_async in the caller")
for ln in (110, 281):
    site(E, "torchsde/_core/sdeint.py", ln, "none", why=R_RECON)

# ---------------------------------------------------------------- torchvision
TV = "torchvision"
site(TV, "torchvision/models/detection/fcos.py", 520, "none", why=R_DYN_OUT)
site(TV, "torchvision/ops/boxes.py", 54, "none", why=R_DYN_OUT)
subedit("equalize_hist_scatter", "torchvision/transforms/_functional_tensor.py", 871, 871,
 [("        hist = torch.bincount(img_chan.reshape(-1), minlength=256)",
   """        # uint8 values: exactly the 256 bins bincount's minlength gives
        flat = img_chan.reshape(-1).to(torch.int64)
        hist = torch.zeros(256, dtype=torch.int64, device=img_chan.device).scatter_add_(0, flat, torch.ones_like(flat))""")],
 "bincount with a known bin count (uint8: 256): zeros(n).scatter_add_",
 "the histogram of a uint8 channel as a 256-bin scatter_add_ (bincount's size is data-dependent to dynamo)")
site(TV, "torchvision/transforms/_functional_tensor.py", 871, "fix", edit="equalize_hist_scatter")
subedit("equalize_step_where", "torchvision/transforms/_functional_tensor.py", 875, 881,
 [("""    if step == 0:
        return img_chan

    lut = torch.div(torch.cumsum(hist, 0) + torch.div(step, 2, rounding_mode="floor"), step, rounding_mode="floor")
    lut = torch.nn.functional.pad(lut, [1, 0])[:-1].clamp(0, 255)

    return lut[img_chan.to(torch.int64)].to(torch.uint8)""",
   """    # a flat histogram (step 0) leaves the channel as it is; 1 stands in for it so that the division is defined
    safe_step = torch.where(step == 0, torch.ones_like(step), step)
    lut = torch.div(torch.cumsum(hist, 0) + torch.div(safe_step, 2, rounding_mode="floor"), safe_step, rounding_mode="floor")
    lut = torch.nn.functional.pad(lut, [1, 0])[:-1].clamp(0, 255)

    return torch.where(step == 0, img_chan, lut[img_chan.to(torch.int64)].to(torch.uint8))""")],
 "an early return on a scalar tensor test before a division by it: a safe divisor and torch.where",
 "the flat-histogram early return as torch.where, the divisor made safe",
 guards=["zero"])
site(TV, "torchvision/transforms/_functional_tensor.py", 875, "fix", edit="equalize_step_where")
subedit("normalize_std_assert", "torchvision/transforms/_functional_tensor.py", 922, 923,
 [("""    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to division by zero.")""",
   """    if torch.compiler.is_compiling():
        torch._assert_async(torch.logical_not((std == 0).any()), "std evaluated to zero, leading to division by zero.")
    elif (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to division by zero.")""")],
 "a data-dependent input check that raises: kept in eager, torch._assert_async when compiling",
 "the zero-std check kept in eager and asserted asynchronously when compiling",
 guards=["zero"])
site(TV, "torchvision/transforms/_functional_tensor.py", 922, "fix", edit="normalize_std_assert")
for ln in (248, 356, 441, 445, 582):
    site(TV, "torchvision/transforms/autoaugment.py", ln, "none", why=R_DRAW)
for ln in (273, 449):
    site(TV, "torchvision/transforms/autoaugment.py", ln, "none", why=R_DRAW_BRANCH)
subedit("dirichlet_gamma_v1", "torchvision/transforms/autoaugment.py", 542, 542,
 [("        return torch._sample_dirichlet(params)",
   """        # a Dirichlet draw as normalised Gamma draws (the same draws; _sample_dirichlet has no fake-tensor kernel)
        gamma = torch._standard_gamma(params)
        return gamma / gamma.sum(-1, keepdim=True)""")],
 "torch._sample_dirichlet (no fake kernel) as normalised torch._standard_gamma",
 "the Dirichlet weights as Gamma draws normalised by their sum",
 caveat="the same generator and number of draws as _sample_dirichlet's CPU kernel, which samples in double (equal to float32 rounding; a rejection step near its bound could in principle decide otherwise)")
site(TV, "torchvision/transforms/autoaugment.py", 542, "fix", edit="dirichlet_gamma_v1")
subedit("perspective_solve", "torchvision/transforms/functional.py", 701, 701,
 [("""    res = torch.linalg.lstsq(a_matrix, b_matrix, driver="gels").solution.to(torch.float32)""",
   """    # an 8x8 system with 8 equations: the solve is the least-squares solution gels gives a full-rank matrix
    res = torch.linalg.solve(a_matrix, b_matrix).to(torch.float32)""")],
 "lstsq of a square full-rank system as linalg.solve",
 "the perspective coefficients by linalg.solve (square 8x8 system) instead of lstsq",
 caveat="gels and solve differ by rounding in float64; a degenerate quad (singular matrix) raises in solve where gels returns garbage")
site(TV, "torchvision/transforms/functional.py", 701, "fix", edit="perspective_solve")
site(TV, "torchvision/transforms/functional.py", 703, "none",
     why="the coefficients are returned as a list of Python floats (the function's contract) for the affine grid's Python arithmetic")
subedit("isinstance_flat_v1", "torchvision/transforms/functional.py", 1195, 1195,
 [("(numbers.Number, (list, tuple))", "(numbers.Number, list, tuple)")],
 "isinstance with a nested tuple of types: the flat tuple (the same test)",
 "the nested type tuple flattened")
site(TV, "torchvision/transforms/functional.py", 1195, "fix", edit="isinstance_flat_v1")
subedit("isinstance_flat_v2", "torchvision/transforms/v2/functional/_geometry.py", 674, 674,
 [("(numbers.Number, (list, tuple))", "(numbers.Number, list, tuple)")],
 "isinstance with a nested tuple of types: the flat tuple (the same test)",
 "the nested type tuple flattened")
site(TV, "torchvision/transforms/v2/functional/_geometry.py", 674, "fix", edit="isinstance_flat_v2")
site(TV, "torchvision/transforms/transforms.py", 811, "none", why=R_DRAW_BRANCH)
site(TV, "torchvision/transforms/transforms.py", 1727, "none", why=R_DRAW_BRANCH)
for ln in (832, 833, 836, 837, 840, 841, 844, 845, 1261, 1262, 1263, 1264, 1360, 1493, 1497, 1498, 1504, 1510, 1809):
    site(TV, "torchvision/transforms/transforms.py", ln, "none", why=R_DRAW)
for ln in (42, 333, 506, 625):
    site(TV, "torchvision/transforms/v2/_auto_augment.py", ln, "none", why=R_DRAW)
for ln in (336, 507):
    site(TV, "torchvision/transforms/v2/_auto_augment.py", ln, "none", why=R_DRAW_BRANCH)
subedit("dirichlet_gamma_v2", "torchvision/transforms/v2/_auto_augment.py", 592, 592,
 [("        return torch._sample_dirichlet(params)",
   """        # a Dirichlet draw as normalised Gamma draws (the same draws; _sample_dirichlet has no fake-tensor kernel)
        gamma = torch._standard_gamma(params)
        return gamma / gamma.sum(-1, keepdim=True)""")],
 "torch._sample_dirichlet (no fake kernel) as normalised torch._standard_gamma",
 "the Dirichlet weights as Gamma draws normalised by their sum",
 caveat="as dirichlet_gamma_v1")
site(TV, "torchvision/transforms/v2/_auto_augment.py", 592, "fix", edit="dirichlet_gamma_v2")
site(TV, "torchvision/transforms/v2/_color.py", 144, "none", why=R_DRAW)
for ln in (551, 552, 555, 556):
    site(TV, "torchvision/transforms/v2/_geometry.py", ln, "none", why=R_DRAW_SHAPE)
for ln in (642, 746, 750, 751, 758, 764, 994, 995, 998, 999, 1002, 1003, 1006, 1007):
    site(TV, "torchvision/transforms/v2/_geometry.py", ln, "none", why=R_DRAW)
site(TV, "torchvision/transforms/v2/_misc.py", 210, "none", why=R_DRAW)
subedit("v2_comprehension_loop", "torchvision/transforms/v2/_transform.py", 59, 71,
 [("""        flat_outputs = [
            self.transform(inpt, params) if needs_transform else inpt
            for (inpt, needs_transform) in zip(flat_inputs, needs_transform_list)
        ]""", """        flat_outputs = []
        for inpt, needs_transform in zip(flat_inputs, needs_transform_list):
            flat_outputs.append(self.transform(inpt, params) if needs_transform else inpt)""")],
 "a list comprehension dynamo fails to iterate (GB4347 Missing tp_iternext): an explicit loop",
 "the comprehension as a for loop with append (the same calls in the same order)")
site(TV, "torchvision/transforms/v2/_transform.py", 68, "fix", edit="v2_comprehension_loop")
site(TV, "torchvision/transforms/v2/_transform.py", 187, "none", why=R_DRAW_BRANCH)

# ---------------------------------------------------------------- vector-quantize-pytorch
Q = "vector-quantize-pytorch"
site(Q, "vector_quantize_pytorch/residual_vq.py", 102, "none",
     why="a torch-drawn seed read back for random.Random (Python's generator seeded from torch's): the read-back is the break, any other seed changes the dropout draws")
site(Q, "vector_quantize_pytorch/residual_vq.py", 479, "none",
     why="the quantizer-dropout cut-off is a random.Random draw (seeded by line 102) that dynamo keeps symbolic; the branch skips the layers past it, and running them all to mask them would update their codebooks (training EMA) and change the module's state")
subedit("einx_add_native", "vector_quantize_pytorch/residual_vq.py", 521, 521,
 [("                search_scores = einx.add('... j, ... j k -> ... (j k)', search_scores, -loss * score_weight)",
   "                search_scores = (search_scores.unsqueeze(-1) + (-loss * score_weight)).flatten(-2)")],
 "an einx call dynamo cannot trace: the same broadcast in torch",
 "einx.add('... j, ... j k -> ... (j k)') as unsqueeze, add and flatten")
site(Q, "vector_quantize_pytorch/residual_vq.py", 521, "fix", edit="einx_add_native")
site(Q, "vector_quantize_pytorch/vector_quantize_pytorch.py", 454, "outside",
     outside="the `initted` buffer tested on every call: a Python flag kept beside it (set in __init__, init_embed_ and on load_state_dict) would let the test be Python")
site(Q, "vector_quantize_pytorch/vector_quantize_pytorch.py", 565, "none",
     why="the dead-code count sizes random sampling (randperm, sample_vectors): a data-dependent number of draws")
site(Q, "vector_quantize_pytorch/vector_quantize_pytorch.py", 593, "none",
     why="the early return skips replace(), whose random draws are sized by the dead-code count: no edit in this function removes the branch without running those draws")
site(Q, "vector_quantize_pytorch/vector_quantize_pytorch.py", 1315, "none",
     why="a zero loss that must require grad (so that backward works with no loss term): dynamo supports neither requires_grad_() (GB0125) nor a tensor created with requires_grad=True (GB0225, tried: zeros_like(self.zero, requires_grad=self.training) was refused for it); dropping it changes behaviour")

# ---------------------------------------------------------------- vit-pytorch, x-transformers
site("vit-pytorch", "vit_pytorch/ats_vit.py", 88, "none", why=R_DYN_OUT)
site("x-transformers", "x_transformers/entropy_based_tokenizer.py", 182, "none", why=R_DYN_OUT)

REFUSAL = {
 "entmax_unsolved_where": "possible false refusal: the outputs are equal (the proof says so); the proof compares the locals of the recursive call's frame (pass 2), whose input this edit changes on purpose (every row instead of the unsolved ones). A full-sort variant (k=None) was refused the same way (the edited statements pass 2 times, head's 3). The local-value check cannot accept any fixed-shape form of a masked recursion.",
 "swin_check_python": "possible false refusal: the 'zero' guard is inferred from the `> 0` of the replaced text, but its operands are Python ints from the input's shape; no tensor can hold the zero, so the check is called unexercised. The edit is the same test on the same ints (numpy replaced by Python) by construction.",
 "lovasz_present_where": "possible false refusal (narrow): on the injected all-absent input head's `mean([])` returns the Python int 0 and the edit a 0-d tensor 0.; the values are equal and the caller adds the term to tensor losses, so the model's outputs are equal. The proof compares the function's return types.",
 "pearson_where": "right by the proof's rule: with NaN in var_x and no valid entry head's output is a constant NaN without gradient; the edit's output carries NaN gradients (0 x NaN through var_x's own computation). A maintainer might accept it (NaN in, NaN out), but it is a gradient difference.",
 "retrieval_check_assert": "unexercised, not wrong: neither model's injected values make head raise the ValueError (tried on retrieval_precision and retrieval_mrr); eager keeps the check unchanged",
 "rk_repeat_assert": "unexercised: the model passes no step_t/jump_t, so no input reaches the check; eager keeps it unchanged",
 "grid_assert": "false refusal (checked after the run, by logging the proof's comparisons): on the injected invalid `t` head's own output holds uninitialised memory, `torch.empty` rows of `solution` that FixedGridODESolver.integrate never writes when `t` is not increasing (values like 1e-43, 1e27, 1.7e38), so two runs of the same code differ; eager runs head's assert unchanged under this edit, and the compiled run matched. The proof compares garbage with garbage.",
 "linear_interp_where": "right to withhold: no case of the model lands exactly on a grid point (t == t0 or t == t1), so torch.where against the early return is never compared; zeros injected do not reach it either",
 "dirichlet_gamma_v1": "right to refuse: the GB0090 break is gone, but the refusal holds on its merits. With the shape matrix (--matrix) the same edit in v2 AugMix gives outputs off by 1 on a uint8 image (torch._standard_gamma samples in float where _sample_dirichlet samples in double, and the rounding to uint8 flips), so the draws are not the same; the single-case refusal names one graph more (30 instead of 29), not investigated further.",
 "dirichlet_gamma_v2": "right to refuse: 28 graphs instead of 27 on one case; with the shape matrix the outputs differ by 1 on the second case (uint8), the Gamma draws in float not matching the Dirichlet kernel's double",
 "isinstance_flat_v1": "with the shape matrix only (verified on one case): the break removed lets dynamo trace on into the affine/rotate code with the random angle and translations as Python constants, so each new draw recompiles (transforms_v1: a new recompile; autoaugment_v1: the recompile limit). A real cost; the proof is right to report it under its rules, though the cause is the random draws' .item() (the GB0124 sites), not this edit",
 "isinstance_flat_v2": "as isinstance_flat_v1 (transforms_v2: a new recompile in the ColorJitter draw path; autoaugment_v2: the recompile limit)",
}
for n, r in REFUSAL.items():
    EDITS[n]["refusal"] = r

FAMILY = {
 "canny_while_loop": "the function's own compile-friendly branch, taken when compiling (`or torch.compiler.is_compiling()`)",
 "bincount_compile_branch": "the function's own compile-friendly branch, taken when compiling (`or torch.compiler.is_compiling()`)",
 "prc_check_assert": "a data-dependent check (assert / if ...: raise): kept in eager, torch._assert_async when compiling",
 "normalize_std_assert": "a data-dependent check (assert / if ...: raise): kept in eager, torch._assert_async when compiling",
 "rk_step_asserts": "a data-dependent check (assert / if ...: raise): kept in eager, torch._assert_async when compiling",
 "retrieval_check_assert": "a data-dependent check (assert / if ...: raise): kept in eager, torch._assert_async when compiling",
 "rk_repeat_assert": "a data-dependent check (assert / if ...: raise): kept in eager, torch._assert_async when compiling",
 "grid_assert": "a data-dependent check (assert / if ...: raise): kept in eager, torch._assert_async when compiling",
 "equalize_step_where": "a branch on a tensor (early return, conditional assignment, masked write, skipped item) as torch.where",
 "optimal_step_where": "a branch on a tensor (early return, conditional assignment, masked write, skipped item) as torch.where",
 "mrr_argmax": "a branch on a tensor (early return, conditional assignment, masked write, skipped item) as torch.where",
 "linear_interp_where": "a branch on a tensor (early return, conditional assignment, masked write, skipped item) as torch.where",
 "pearson_where": "a branch on a tensor (early return, conditional assignment, masked write, skipped item) as torch.where",
 "lovasz_present_where": "a branch on a tensor (early return, conditional assignment, masked write, skipped item) as torch.where",
 "entmax_unsolved_where": "a branch on a tensor (early return, conditional assignment, masked write, skipped item) as torch.where",
 "equalize_hist_scatter": "a dynamic-shape op whose size is known: its fixed-size equivalent (bincount -> scatter_add_, unique -> searchsorted, lstsq -> solve, mask -> slices)",
 "spearman_searchsorted": "a dynamic-shape op whose size is known: its fixed-size equivalent (bincount -> scatter_add_, unique -> searchsorted, lstsq -> solve, mask -> slices)",
 "perspective_solve": "a dynamic-shape op whose size is known: its fixed-size equivalent (bincount -> scatter_add_, unique -> searchsorted, lstsq -> solve, mask -> slices)",
 "navit_valid_rows": "a dynamic-shape op whose size is known: its fixed-size equivalent (bincount -> scatter_add_, unique -> searchsorted, lstsq -> solve, mask -> slices)",
 "kornia_comprehension_loop": "a list comprehension dynamo cannot iterate (GB4347): an index loop / explicit for loop",
 "v2_comprehension_loop": "a list comprehension dynamo cannot iterate (GB4347): an index loop / explicit for loop",
 "isinstance_flat_v1": "isinstance with a nested tuple of types (GB0088): the flat tuple",
 "isinstance_flat_v2": "isinstance with a nested tuple of types (GB0088): the flat tuple",
 "einx_add_native": "an untraceable helper library call (einx): the same op in torch",
 "swin_check_python": "a shape check in numpy: the same check on Python ints",
 "dirichlet_gamma_v1": "an op without a fake kernel (torch._sample_dirichlet): the same draws through a traceable op (normalised _standard_gamma)",
 "dirichlet_gamma_v2": "an op without a fake kernel (torch._sample_dirichlet): the same draws through a traceable op (normalised _standard_gamma)",
}
for n, f in FAMILY.items():
    EDITS[n]["family"] = f
assert set(FAMILY) == set(EDITS), set(EDITS) ^ set(FAMILY)


# ============================================================================ ceiling.json
def main():
    sites = {}
    for o in open_sites():
        k = f"{o['lib']} {o['path']}:{o['line']}"
        v = V.get(k) or {"verdict": "undecided", "why": "not yet read"}
        if v.get("edit"):
            v["pattern"] = EDITS[v["edit"]]["pattern"]
        sites[k] = {"lib": o["lib"], "path": o["path"], "line": o["line"], "gb": o["gb"], "source": o["source"],
                    "models": list(dict.fromkeys(o["models"])), **v}
    extra = set(V) - set(sites)
    assert not extra, extra
    with open(os.path.join(ROOT, "benchmarks/real_code/ceiling.json"), "w") as fh:
        json.dump({"about": "Hand verdicts for the real-code benchmark's open sites (main set, e8bcb3f): see "
                            "benchmarks/bench_realcode_ceiling.py; written by benchmarks/real_code/ceiling_verdicts.py",
                   "edits": EDITS, "sites": sites}, fh, indent=1)
    print(collections.Counter(s["verdict"] for s in sites.values()))


if __name__ == "__main__":
    main()
