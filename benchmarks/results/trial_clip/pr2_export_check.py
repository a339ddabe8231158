"""PR 2's posted suggestion (torch._assert_async under is_compiling): does the exported program
still refuse a text without an end-of-text token? No pt2bot code. Applies the suggestion to a copy
of the branch's model.py, exports CLIP.encode_text (texts dynamic), calls it on texts as
clip.tokenize makes them and on texts without the end-of-text token."""
import json, re, subprocess, sys, types
import torch
from torch.export import Dim, export
torch.set_num_threads(1)
branch, review = sys.argv[1], sys.argv[2]
src = subprocess.check_output(["git", "show", f"{branch}:clip/model.py"], text=True).split("\n")
c = json.load(open(review))["comments"][0]
new = re.search(r"```suggestion\n(.*?)```", c["body"], re.S).group(1).rstrip("\n").split("\n")
src[c["start_line"] - 1:c["line"]] = new
mod = types.ModuleType("sugg"); sys.modules["sugg"] = mod
exec(compile("\n".join(src), "sugg/clip/model.py", "exec"), mod.__dict__)


class Text(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.clip = mod.CLIP(embed_dim=32, image_resolution=32, vision_layers=2, vision_width=64,
                             vision_patch_size=16, context_length=16, vocab_size=320,
                             transformer_width=64, transformer_heads=2, transformer_layers=2).eval()

    def forward(self, text):
        return self.clip.encode_text(text)


m = Text()
good = torch.zeros(3, 16, dtype=torch.int64); good[:, 0] = 318; good[:, 1:4] = 7; good[:, 4] = 319
bad = good.clone(); bad[1, 4] = 5
ep = export(m, (good,), dynamic_shapes=({0: Dim("texts", min=2, max=64)},))
print("exported; graph has _assert_async:", any("assert_async" in str(n.target) for n in ep.graph.nodes))
print("good texts: equal to eager:", torch.equal(ep.module()(good), m(good)))
for name, f in (("eager", m), ("exported", ep.module()), ("compiled (eager backend)", torch.compile(m, backend="eager"))):
    try:
        f(bad)
        print(f"{name}: text without end-of-text: no error")
    except Exception as e:
        print(f"{name}: text without end-of-text: {type(e).__name__}: {str(e).splitlines()[0][:150]}")
