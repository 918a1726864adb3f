"""Print the share of softmax, log_softmax, their grads and cross_entropy's grad that differ from PyTorch's, element
by element, for last-dim and other-dim shapes (docs/differences.md, "The softmax family"). Run from a checkout:
``PYTHONPATH=$PWD OMP_NUM_THREADS=1 python tools/softmax_rounding.py`` (PyTorch must be installed)."""
import numpy as np, torch, autogradviz as A
torch.set_num_threads(1)
rng = np.random.default_rng(0)
CASES = [((32, 27), -1), ((64, 10), -1), ((8, 1000), -1), ((4, 5), -1), ((27, 32), 0), ((5, 10), 0), ((4, 27, 3), 1),
         ((3, 7, 40), 1), ((2, 3, 4, 5), 1)]
def run(lib, x, g, dim, fn):
    xt = lib.tensor(x, requires_grad=True)
    y = getattr(lib, fn)(xt, dim)
    y.backward(lib.tensor(g))
    return y.detach().numpy(), xt.grad.numpy()
tot = {}
print(f"{'shape':>14} {'dim':>3} {'softmax':>9} {'sm grad':>9} {'log_sm':>9} {'lsm grad':>9}")
for dt in ("float32", "float64"):
    for shape, dim in CASES:
        cells = []
        for fn in ("softmax", "log_softmax"):
            diff_y = diff_g = 0; n = 0
            for rep in range(20):
                x = (rng.standard_normal(shape) * 3).astype(dt); g = rng.standard_normal(shape).astype(dt)
                ya, ga = run(A, x, g, dim, fn); yt, gt = run(torch, x, g, dim, fn)
                diff_y += (ya != yt).sum(); diff_g += (ga != gt).sum(); n += x.size
            cells += [diff_y / n, diff_g / n]
        print(f"{shape!s:>14} {dim:>3} {dt[-2:]}", " ".join(f"{c*100:8.2f}%" for c in cells))
# cross_entropy gradient
for shape in [(32, 27), (64, 10), (256, 10), (8, 1000)]:
    d = 0; n = 0; dl = 0
    for rep in range(20):
        x = (rng.standard_normal(shape) * 3).astype("float32"); t = rng.integers(0, shape[1], shape[0])
        out = []
        for lib in (A, torch):
            xt = lib.tensor(x, requires_grad=True); loss = lib.nn.functional.cross_entropy(xt, lib.tensor(t)); loss.backward()
            out.append((loss.item(), xt.grad.numpy()))
        d += (out[0][1] != out[1][1]).sum(); n += x.size; dl += out[0][0] != out[1][0]
    print("cross_entropy grad", shape, f"{d / n * 100:.2f}%", "loss differs in", dl, "of 20")
