"""Graph breaks and recompiles of a tiny Whisper under dynamo (eager backend), no pt2bot code.
usage: python check_breaks.py WHISPER_SRC_DIR [mark_dynamic|automatic] [model]"""
import sys, torch
sys.path.insert(0, sys.argv[1])
torch.set_num_threads(1)
from whisper.model import Whisper, ModelDimensions, AudioEncoder, TextDecoder
mode = sys.argv[2] if len(sys.argv) > 2 else "automatic"
which = sys.argv[3] if len(sys.argv) > 3 else "whisper"
torch.manual_seed(0)
dims = ModelDimensions(80, 8, 32, 2, 2, 100, 16, 32, 2, 2)
m = Whisper(dims).eval()
with torch.no_grad():
    m.decoder.positional_embedding.normal_()
f = torch.compile(m if which == "whisper" else m.decoder, backend="eager")
for b, s in [(2, 3), (2, 8), (4, 3), (4, 8)]:
    mel = torch.randn(b, 80, 16); tok = torch.randint(0, 100, (b, s))
    if mode == "mark_dynamic":
        torch._dynamo.mark_dynamic(mel, 0); torch._dynamo.mark_dynamic(tok, 0); torch._dynamo.mark_dynamic(tok, 1)
    with torch.no_grad():
        xa = m.encoder(mel)
    if mode == "mark_dynamic":
        torch._dynamo.mark_dynamic(xa, 0)
    print(f"--- batch={b} seq={s}", flush=True)
    with torch.no_grad():
        out = f(mel, tok) if which == "whisper" else f(tok, xa)
        ref = m(mel, tok) if which == "whisper" else m.decoder(tok, xa)
    print("equal:", torch.equal(out, ref), flush=True)
