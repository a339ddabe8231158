"""pt2bot's compile advice for vit_video_up, `torch.compile(model, dynamic=True)` ("compiles over
the matrix: 18 -> 10"): count frame compiles (first compiles + recompiles, from dynamo's
compile ids) over the same 8 cases, and compare with eager. No pt2bot code."""
import sys, itertools, warnings, logging, torch
warnings.filterwarnings('ignore'); sys.path.insert(0, '.'); torch.set_num_threads(1)
import pt2bot_models as p
from src.models.vision_transformer import VisionTransformer
from torch._guards import CompileContext
ids = set()
orig = torch._dynamo.convert_frame.ConvertFrameAssert.__call__
class H(logging.Handler):
    def emit(self, r):
        msg = r.getMessage()
        if 'Recompiling' in msg: ids.add(('re', len(ids)))
for dyn in (None, True):
    torch._dynamo.reset()
    torch.manual_seed(0)
    m = VisionTransformer(img_size=32, patch_size=8, num_frames=4, tubelet_size=2, embed_dim=48, depth=2, num_heads=2, uniform_power=True).eval()
    c = torch.compile(m, backend='eager', dynamic=dyn)
    torch._dynamo.utils.counters.clear()
    eq = []
    with torch.no_grad():
        for b, f, s in itertools.product((2, 3), (4, 6), (32, 48)):
            inp = p.clips(b, f, s)
            if dyn is None:
                torch._dynamo.maybe_mark_dynamic(inp['x'], 0); torch._dynamo.maybe_mark_dynamic(inp['x'], 2)
                torch._dynamo.maybe_mark_dynamic(inp['x'], 3); torch._dynamo.maybe_mark_dynamic(inp['x'], 4)
            eq.append(torch.equal(c(**inp), m(**inp)))
    st = torch._dynamo.utils.counters['stats']
    print('dynamic=%s: frames compiled (unique_graphs) %s, calls_captured %s, all equal to eager: %s' % (dyn, st['unique_graphs'], st['calls_captured'], all(eq)))
    frames = torch._dynamo.utils.counters['frames']
    print('   frames counters:', dict(frames))
