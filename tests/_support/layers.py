"""The layer cases of tests/test_layers_vs_torch.py (issue 25), shared with the saved-tensor tests: each ``c_<name>(T,
dt)`` builds a layer's output and its leaves with ``T`` (``torch`` or ``autogradviz``) in dtype ``dt``; ``_run``
runs one and sums the outputs with fixed weights, ready for ``backward()``."""
import numpy as np


def mk(T, dt, *shape, seed=0):
    return T.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=dt, requires_grad=True)

def c_emb(T, dt):
    w = mk(T, dt, 10, 3); ix = T.tensor([[1,2,2],[3,1,9]])
    return T.nn.functional.embedding(ix, w, padding_idx=2), [w]
def c_emb_freq(T, dt):
    w = mk(T, dt, 10, 3); ix = T.tensor([[1,2,2],[3,1,9]])
    return T.nn.functional.embedding(ix, w, scale_grad_by_freq=True), [w]
def c_ln(T, dt):
    x = mk(T, dt, 2, 4, 3); w = mk(T, dt, 3, seed=1); b = mk(T, dt, 3, seed=2)
    return T.nn.functional.layer_norm(x, (3,), w, b), [x, w, b]
def c_ln2(T, dt):
    x = mk(T, dt, 2, 4, 3)
    return T.nn.functional.layer_norm(x, (4, 3)), [x]
def c_bn(T, dt):
    x = mk(T, dt, 5, 3); w = mk(T, dt, 3, seed=1); b = mk(T, dt, 3, seed=2)
    rm = T.zeros(3, dtype=dt); rv = T.ones(3, dtype=dt)
    y = T.nn.functional.batch_norm(x, rm, rv, w, b, True, 0.1)
    return (y, rm, rv), [x, w, b]
def c_bn_eval(T, dt):
    x = mk(T, dt, 5, 3, 2); w = mk(T, dt, 3, seed=1); b = mk(T, dt, 3, seed=2)
    rm = T.tensor([0.1, -0.2, 0.3], dtype=dt); rv = T.tensor([1.5, 0.5, 2.0], dtype=dt)
    return T.nn.functional.batch_norm(x, rm, rv, w, b, False), [x, w, b]
def c_bn2d(T, dt):
    x = mk(T, dt, 2, 3, 4, 4)
    return T.nn.functional.batch_norm(x, None, None, training=True), [x]
def c_conv(T, dt):
    x = mk(T, dt, 2, 3, 7, 6); w = mk(T, dt, 4, 3, 3, 2, seed=1); b = mk(T, dt, 4, seed=2)
    return T.nn.functional.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2)), [x, w, b]
def c_conv_g(T, dt):
    x = mk(T, dt, 2, 4, 6, 6); w = mk(T, dt, 6, 2, 3, 3, seed=1)
    return T.nn.functional.conv2d(x, w, None, groups=2, padding="same"), [x, w]
def c_conv_same_even(T, dt):
    x = mk(T, dt, 1, 2, 5, 5); w = mk(T, dt, 3, 2, 2, 4, seed=1)
    return T.nn.functional.conv2d(x, w, padding="same"), [x, w]
def c_conv1(T, dt):
    x = mk(T, dt, 2, 3, 9); w = mk(T, dt, 4, 3, 3, seed=1); b = mk(T, dt, 4, seed=2)
    return T.nn.functional.conv1d(x, w, b, stride=2, padding=2, dilation=2), [x, w, b]
def c_conv_unb(T, dt):
    x = mk(T, dt, 3, 5, 5); w = mk(T, dt, 2, 3, 3, 3, seed=1)
    return T.nn.functional.conv2d(x, w), [x, w]
def c_mp(T, dt):
    x = mk(T, dt, 2, 2, 5, 5)
    return T.nn.functional.max_pool2d(x, 2), [x]
def c_mp2(T, dt):
    x = mk(T, dt, 2, 2, 7, 6)
    return T.nn.functional.max_pool2d(x, 3, 2, 1, ceil_mode=True), [x]
def c_mp3(T, dt):
    x = mk(T, dt, 2, 7, 6)
    return T.nn.functional.max_pool2d(x, (3, 2), (1, 2), (1, 0), dilation=(2, 1)), [x]
def c_ap(T, dt):
    x = mk(T, dt, 2, 2, 5, 5)
    return T.nn.functional.avg_pool2d(x, 2), [x]
def c_ap2(T, dt):
    x = mk(T, dt, 2, 2, 7, 6)
    return T.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), [x]
def c_ap3(T, dt):
    x = mk(T, dt, 2, 2, 7, 6)
    return T.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True, divisor_override=2), [x]
def c_ap4(T, dt):
    x = mk(T, dt, 2, 2, 7, 6)
    return T.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True), [x]
def c_aap(T, dt):
    x = mk(T, dt, 2, 2, 7, 6)
    return T.nn.functional.adaptive_avg_pool2d(x, (3, 4)), [x]
def c_aap1(T, dt):
    x = mk(T, dt, 2, 2, 7, 6)
    return T.nn.functional.adaptive_avg_pool2d(x, 1), [x]
def c_padc(T, dt):
    x = mk(T, dt, 2, 3, 4)
    return T.nn.functional.pad(x, (1, 2, -1, 1), value=0.5), [x]
def c_padr(T, dt):
    x = mk(T, dt, 1, 2, 4, 5)
    return T.nn.functional.pad(x, (2, 1, 1, 3), mode="reflect"), [x]
def c_padrep(T, dt):
    x = mk(T, dt, 2, 4, 5)
    return T.nn.functional.pad(x, (2, 3), mode="replicate"), [x]
def c_sd(T, dt):
    q = mk(T, dt, 2, 2, 4, 8); k = mk(T, dt, 2, 2, 5, 8, seed=1); v = mk(T, dt, 2, 2, 5, 8, seed=2)
    return T.nn.functional.scaled_dot_product_attention(q, k, v), [q, k, v]
def c_sdc(T, dt):
    q = mk(T, dt, 2, 2, 4, 8); k = mk(T, dt, 2, 2, 4, 8, seed=1); v = mk(T, dt, 2, 2, 4, 8, seed=2)
    return T.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), [q, k, v]
def c_sdm(T, dt):
    q = mk(T, dt, 2, 2, 4, 8); k = mk(T, dt, 2, 2, 4, 8, seed=1); v = mk(T, dt, 2, 2, 4, 8, seed=2)
    m = T.ones(4, 4, dtype=T.bool).tril()
    return T.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3), [q, k, v]
def c_sd_mask_and_causal(T, dt):
    q = mk(T, dt, 1, 2, 4, 8); k = mk(T, dt, 1, 2, 4, 8, seed=1); v = mk(T, dt, 1, 2, 4, 8, seed=2)
    m = T.tensor(np.random.default_rng(4).uniform(-1, 1, (4, 4)), dtype=dt)
    return T.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True), [q, k, v]
def c_sd_causal_rect(T, dt):
    q = mk(T, dt, 1, 2, 3, 4); k = mk(T, dt, 1, 2, 5, 4, seed=1); v = mk(T, dt, 1, 2, 5, 4, seed=2)
    return T.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), [q, k, v]
def c_sd_mask_grad(T, dt):
    q = mk(T, dt, 1, 2, 3, 4); k = mk(T, dt, 1, 2, 3, 4, seed=1); v = mk(T, dt, 1, 2, 3, 4, seed=2)
    m = mk(T, dt, 3, 3, seed=3)
    return T.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m), [q, k, v, m]
def c_sd_v_dim(T, dt):
    q = mk(T, dt, 1, 2, 3, 4); k = mk(T, dt, 1, 2, 5, 4, seed=1); v = mk(T, dt, 1, 2, 5, 6, seed=2)
    return T.nn.functional.scaled_dot_product_attention(q, k, v), [q, k, v]
def c_sd_mask4d(T, dt):
    q = mk(T, dt, 2, 2, 3, 4); k = mk(T, dt, 2, 2, 3, 4, seed=1); v = mk(T, dt, 2, 2, 3, 4, seed=2)
    m = T.tensor(np.random.default_rng(5).uniform(-1, 1, (2, 1, 3, 3)), dtype=dt)
    return T.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m), [q, k, v]
def c_sdd(T, dt):
    q = mk(T, dt, 2, 2, 4, 8); k = mk(T, dt, 2, 2, 4, 8, seed=1); v = mk(T, dt, 2, 2, 4, 8, seed=2)
    return T.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.3, is_causal=True), [q, k, v]
def c_sd3(T, dt):
    q = mk(T, dt, 2, 4, 8); k = mk(T, dt, 2, 4, 8, seed=1); v = mk(T, dt, 2, 4, 8, seed=2)
    return T.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=T.zeros(4, 4, dtype=dt)), [q, k, v]



CASES = {name: fn for name, fn in list(globals().items())
         if callable(fn) and getattr(fn, "__module__", None) == __name__ and name.startswith("c_")}


def _run(T, fn, dt):
    T.manual_seed(0)
    out, ins = fn(T, dt)
    outs = out if isinstance(out, tuple) else (out,)
    rng = np.random.default_rng(3)
    tot = sum((o * T.tensor(rng.uniform(-1, 1, size=tuple(o.shape)), dtype=o.dtype)).sum() for o in outs
              if o.requires_grad)
    return outs, ins, tot


def c_emb_plain(T, dt):
    w = mk(T, dt, 6, 3)
    return T.nn.functional.embedding(T.tensor([[1, 2, 2], [3, 1, 5]]), w), [w]


CASES["c_emb_plain"] = c_emb_plain
