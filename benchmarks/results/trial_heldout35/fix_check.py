"""PR 2's verified setting, checked with no pt2bot code: head (model_bonds.py, MolPropNet with
egnn-pytorch's only_sparse_neighbors=True over the bonds) in eager against the same model compiled
with `torch._dynamo.config.capture_scalar_outputs = True`, the setting the review posted as
"Verified setting", on many inputs: random molecules of 1 to 6 per batch and 5 to 16 atoms, bond
densities from none to full, chains, one-atom molecules, all-padding molecules, zeros, tiny, huge,
negated, NaN and inf coordinates; outputs, and with gradients the gradients of the summed outputs
with respect to the coordinates and every parameter, compared exactly (equal NaN positions).
Backends: "eager" (as the review's smoke run) and "aot_eager" (AOTAutograd's traced backward).
Also counts the frames compiled and recompiles, and tries torch.export under the setting.

    python fix_check.py > fix_check.log 2> fix_check.stderr
"""
import importlib.util
import sys
import time

import torch
import torch._dynamo as dynamo

HERE = __file__.rsplit("/", 1)[0]


def load(name):
    spec = importlib.util.spec_from_file_location(name, f"{HERE}/{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    na, nb = a.isnan(), b.isnan()
    return bool(torch.equal(na, nb) and torch.equal(torch.where(na, 0.0, a), torch.where(nb, 0.0, b)))


def sym(b):
    b = b | b.transpose(1, 2)
    return b & ~torch.eye(b.shape[1], dtype=torch.bool)


def inputs():
    g = torch.Generator().manual_seed(7)
    out = []
    for i in range(24):
        B, N = 1 + i % 6, 5 + (i * 5) % 12
        dens = [0.0, 0.1, 0.2, 0.35, 0.6, 1.0][i % 6]
        atoms = torch.randint(0, 10, (B, N), generator=g)
        coors = torch.randn(B, N, 3, generator=g) * (0.5 + i % 4)
        mask = torch.rand(B, N, generator=g) < 0.85
        bonds = sym(torch.rand(B, N, N, generator=g) < dens)
        out.append((f"rand{i}_B{B}_N{N}_dens{dens}", (atoms, coors, mask, bonds)))
    B, N = 3, 9
    atoms = torch.randint(0, 10, (B, N), generator=g)
    coors = torch.randn(B, N, 3, generator=g)
    full = torch.ones(B, N, dtype=torch.bool)
    chain = torch.zeros(B, N, N, dtype=torch.bool)
    idx = torch.arange(N - 1)
    chain[:, idx, idx + 1] = True
    chain[:, idx + 1, idx] = True
    nob = torch.zeros(B, N, N, dtype=torch.bool)
    allb = sym(torch.ones(B, N, N, dtype=torch.bool))
    star = torch.zeros(B, N, N, dtype=torch.bool)
    star[:, 0, 1:] = True
    star[:, 1:, 0] = True
    pad = full.clone()
    pad[1] = False                       # one all-padding molecule
    one = torch.zeros(B, N, dtype=torch.bool)
    one[:, 0] = True                     # one-atom molecules
    nan = coors.clone(); nan[0, 2, 1] = float("nan")
    inf = coors.clone(); inf[1, 3, 0] = float("inf")
    out += [
        ("chain", (atoms, coors, full, chain)),
        ("no_bonds", (atoms, coors, full, nob)),
        ("all_bonded", (atoms, coors, full, allb)),
        ("star", (atoms, coors, full, star)),
        ("chain_one_padding_molecule", (atoms, coors, pad, chain)),
        ("one_atom_molecules", (atoms, coors, one, chain)),
        ("all_padding", (atoms, coors, torch.zeros(B, N, dtype=torch.bool), chain)),
        ("zeros", (atoms, torch.zeros_like(coors), full, chain)),
        ("tiny", (atoms, coors * 1e-30, full, chain)),
        ("huge", (atoms, coors * 1e6, full, chain)),
        ("negated", (atoms, -coors, full, chain)),
        ("nan", (atoms, nan, full, chain)),
        ("inf", (atoms, inf, full, chain)),
        ("atoms_zero", (torch.zeros_like(atoms), coors, full, chain)),
    ]
    return out


def call(model, fn, args, grad):
    atoms, coors, mask, bonds = args
    c = coors.clone().requires_grad_(grad)
    model.zero_grad(set_to_none=True)
    try:
        with torch.set_grad_enabled(grad):
            y = fn(atoms, c, mask, bonds)
            if not grad:
                return ("ok", [y.detach()])
            torch.nan_to_num(y, 0.0, 0.0, 0.0).sum().backward()
            return ("ok", [y.detach(), c.grad] + [p.grad for p in model.parameters()])
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e).__name__, str(e).split("\n")[0][:200])


def eq(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "raise":
        return a[1] == b[1]
    return len(a[1]) == len(b[1]) and all(same(x, y) for x, y in zip(a[1], b[1]))


def main():
    torch.manual_seed(0)
    mod = load("model_bonds")
    model = mod.MolPropNet().eval()
    ins = inputs()
    n = ok = 0
    for backend in ("eager", "aot_eager"):
        for grad in (False, True):
            dynamo.reset()
            torch._dynamo.config.capture_scalar_outputs = True
            dynamo.utils.counters.clear()
            comp = torch.compile(model, backend=backend)
            t0 = time.time()
            bad = []
            for name, args in ins:
                e = call(model, model, args, grad)
                c = call(model, comp, args, grad)
                n += 1
                if eq(e, c):
                    ok += 1
                else:
                    bad.append(f"{name}: eager {e[0] if e[0]=='ok' else e[1:]} / compiled {c[0] if c[0]=='ok' else c[1:]}")
            st = dict(dynamo.utils.counters["stats"])
            gb = sum(dynamo.utils.counters["graph_break"].values())
            print(f"backend={backend} grad={grad}: {len(ins) - len(bad)} of {len(ins)} equal; "
                  f"frames compiled {st.get('unique_graphs')}, calls captured {st.get('calls_captured')}, "
                  f"graph breaks {gb}; {time.time() - t0:.1f} s", flush=True)
            for b in bad:
                print("   DIFFER", b)
            torch._dynamo.config.capture_scalar_outputs = False
    print(f"total: {ok} of {n} equal")
    # head without the setting, for the break count
    dynamo.reset(); dynamo.utils.counters.clear()
    comp = torch.compile(model, backend="eager")
    for name, args in ins[:6]:
        with torch.no_grad():
            comp(*args)
    print("head without the setting: graph breaks", sum(dynamo.utils.counters["graph_break"].values()),
          "reasons", sorted({k[:80] for k in dynamo.utils.counters["graph_break"]}))
    # export under the setting
    torch._dynamo.config.capture_scalar_outputs = True
    name, args = ins[0]
    for strict in (False, True):
        try:
            ep = torch.export.export(model, args, strict=strict)
            r = ep.module()(*ins[1][1]) if ins[1][1][0].shape == args[0].shape else None
            print(f"export strict={strict} under the setting: ok")
        except Exception as e:  # noqa: BLE001
            print(f"export strict={strict} under the setting: {type(e).__name__}: {str(e).splitlines()[0][:200]}")


if __name__ == "__main__":
    main()
