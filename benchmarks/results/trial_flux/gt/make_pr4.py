# writes PR4's change into the checkout (run in the repo root)
p='src/flux/modules/autoencoder.py'; s=open(p).read()
old='''        # cast to proper dtype
        h = h.to(upscale_dtype)
'''
new='''        # fp16 decoding overflows in the mid block on large latents (black images); clamp
        # to the fp16 range before upsampling
        if h.abs().max() > 6e4:
            h = h.clamp(-6e4, 6e4)

        # cast to proper dtype
        h = h.to(upscale_dtype)
'''
assert old in s; s=s.replace(old,new,1); open(p,'w').write(s)
p='src/flux/sampling.py'; s=open(p).read()
old='''        img = img + (t_prev - t_curr) * pred
'''
new='''        if not torch.isfinite(pred).all():
            print(f"denoise: non-finite prediction at t={t_vec[0].item():.3f}")
        img = img + (t_prev - t_curr) * pred
'''
assert old in s; s=s.replace(old,new,1); open(p,'w').write(s)
