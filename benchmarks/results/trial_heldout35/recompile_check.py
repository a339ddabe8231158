"""PR 1 (model_atomlog.py: `n_real = int(mask.sum())`, `self.atoms_seen += n_real`, an early
return for an all-padding batch), no pt2bot code: one batch shape, 12 batches whose masks hold
different numbers of real atoms, compiled with backend "eager" as a training loop would call it;
counts recompiles (TORCH_LOGS=recompiles on stderr) and whether the recompile limit is hit. Then
the helper's own rewrite (model_atomlog_hand.py: a buffer counter, torch.where for the early
return) against head in eager on the same batches and an all-padding batch, with gradients:
outputs, coordinate and parameter gradients, the counter."""
import importlib.util
import torch
import torch._dynamo as dynamo

HERE = __file__.rsplit("/", 1)[0]


def load(name):
    spec = importlib.util.spec_from_file_location(name, f"{HERE}/{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


g = torch.Generator().manual_seed(3)
B, N = 4, 12
batches = []
for k in range(12):
    atoms = torch.randint(0, 10, (B, N), generator=g)
    coors = torch.randn(B, N, 3, generator=g)
    mask = torch.zeros(B, N, dtype=torch.bool)
    for b in range(B):
        mask[b, : 5 + (k + b) % 8] = True
    batches.append((atoms, coors, mask))
batches.append((batches[0][0], batches[0][1], torch.zeros(B, N, dtype=torch.bool)))

torch.manual_seed(0)
head = load("model_atomlog").MolPropNet().eval()
dynamo.reset()
dynamo.utils.counters.clear()
comp = torch.compile(head, backend="eager")
with torch.no_grad():
    for a in batches[:12]:
        comp(*a)
print("head compiled, 12 batches of one shape with", [int(a[2].sum()) for a in batches[:12]], "real atoms:",
      "graphs compiled", dynamo.utils.counters["stats"]["unique_graphs"],
      "(the recompile records and the recompile_limit warning are on stderr)")

torch.manual_seed(0)
hand = load("model_atomlog_hand").MolPropNet().eval()
hand.load_state_dict(head.state_dict(), strict=False)
head.atoms_seen = 0
n = ok = 0
for compiled in (False, True):
    dynamo.reset()
    fn = torch.compile(hand, backend="eager") if compiled else hand
    hand.atoms_seen.zero_()
    head.atoms_seen = 0
    for i, (atoms, coors, mask) in enumerate(batches):
        res = []
        for m, f in ((head, head), (hand, fn)):
            c = coors.clone().requires_grad_(True)
            m.zero_grad(set_to_none=True)
            y = f(atoms, c, mask)
            if y.requires_grad:
                y.sum().backward()
            res.append([y.detach(), c.grad] + [p.grad for p in m.parameters()])
        same = all((a is None and (b is None or not b.any())) or (b is None and (a is None or not a.any()))
                   or (a is not None and b is not None and torch.equal(a, b)) for a, b in zip(*res))
        exact = all((a is None) == (b is None) and (a is None or torch.equal(a, b)) for a, b in zip(*res))
        n += 1
        ok += same
        if not exact:
            print(f"  compiled={compiled} batch {i} ({int(mask.sum())} atoms): equal {same} "
                  f"(exact incl. None vs zero gradients: {exact})")
    print(f"compiled={compiled}: counters head {head.atoms_seen}, rewrite {int(hand.atoms_seen)}")
print(f"rewrite against head: {ok} of {n} equal (None gradients counted equal to zero ones)")
dynamo.reset(); dynamo.utils.counters.clear()
comp = torch.compile(hand, backend="eager")
with torch.no_grad():
    for a in batches:
        comp(*a)
print("rewrite compiled on all 13 batches: frames compiled", dynamo.utils.counters["stats"]["unique_graphs"],
      "graph breaks", sum(dynamo.utils.counters["graph_break"].values()))
for strict in (False, True):
    try:
        torch.export.export(hand, batches[0], strict=strict)
        print(f"rewrite export strict={strict}: ok")
    except Exception as e:  # noqa: BLE001
        print(f"rewrite export strict={strict}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
