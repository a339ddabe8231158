"""multi_crop with `dynamic: [batch]` applied to the crops (mark_dynamic on each crop's dim 0),
as pt2bot.yml declares it; pt2bot's run left the list's tensors unmarked. (no pt2bot code)"""
import sys, torch
torch.set_num_threads(1)
sys.path.insert(0, '.')
import pt2bot_models
torch.manual_seed(0)
m = pt2bot_models.tiny_multicrop().eval()
c = torch.compile(m, backend='eager')
with torch.no_grad():
    for b in (2, 4):
        x = pt2bot_models.multicrop_inputs(b, 32, 16)['x']
        for t in x:
            torch._dynamo.mark_dynamic(t, 0)
        print(f'case b={b}', flush=True)
        assert torch.equal(c(x), m(x))
