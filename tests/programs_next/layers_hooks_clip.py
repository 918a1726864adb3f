"""Module hooks (forward, full backward, backward pre-hooks) and gradient clipping while training."""
PROGRAMS = []


def _net(T, kind):
    nn = T.nn
    if kind == "mlp":
        return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))
    return nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 3))


def _make(seed, kind="mlp", clip="norm", max_norm=0.5, scale_pre=None, input_grad=False, remove_after=None,
          steps=3):
    def prog(T):
        T.manual_seed(seed)
        net = _net(T, kind)
        x = T.randn(5, 6) if kind == "mlp" else T.randn(5, 1, 6, 6)
        if input_grad:
            x.requires_grad_()
        y = T.randint(0, 3, (5,))
        handles = []

        def fwd(m, inp, out):
            print("  forward", type(m).__name__, tuple(out.shape), out.grad_fn.name())

        def bwd(m, gin, gout):
            print("  backward", type(m).__name__, [None if g is None else tuple(g.shape) for g in gin],
                  gout[0].abs().sum())

        def pre(m, gout):
            print("  pre", type(m).__name__, gout[0].abs().sum())
            if scale_pre is not None:
                return (gout[0] * scale_pre,)

        for i, m in enumerate(net):
            if isinstance(m, (T.nn.Linear, T.nn.Conv2d)):
                handles.append(m.register_forward_hook(fwd))
                handles.append(m.register_full_backward_hook(bwd))
            if i == len(net) - 1:
                handles.append(m.register_full_backward_pre_hook(pre))
        opt = T.optim.SGD(net.parameters(), lr=0.1)
        for step in range(steps):
            out = net(x)
            print(out.grad_fn.name(), out.grad_fn.next_functions[0][0].name())
            loss = T.nn.functional.cross_entropy(out, y)
            opt.zero_grad()
            loss.backward()
            if clip == "norm":
                total = T.nn.utils.clip_grad_norm_(net.parameters(), max_norm)
                print("total norm", total)
            elif clip == "inf":
                print("total norm", T.nn.utils.clip_grad_norm_(net.parameters(), max_norm, norm_type="inf"))
            else:
                T.nn.utils.clip_grad_value_(net.parameters(), max_norm)
            print(step, loss, net[0].weight.grad.abs().max())
            opt.step()
            if remove_after is not None and step == remove_after:
                for h in handles:
                    h.remove()
        vec = T.nn.utils.parameters_to_vector(net.parameters())
        print(vec.shape, vec.grad_fn.name(), vec[:4])
        T.nn.utils.vector_to_parameters(vec.detach() * 0, net.parameters())
        print(net[0].weight.sum())
        if input_grad:
            print(x.grad.abs().sum())
    prog.__name__ = f"hooks_{seed}_{kind}_{clip}_{max_norm}_{'x' if input_grad else 'nox'}"
    PROGRAMS.append(prog)


_make(1)
_make(2, clip="value", max_norm=0.01)
_make(3, input_grad=True)
_make(4, scale_pre=0.5, clip="inf", max_norm=0.05)
_make(5, kind="conv")
_make(6, kind="conv", input_grad=True, clip="value", max_norm=0.02)
_make(7, remove_after=0, max_norm=10.0)
_make(8, kind="conv", scale_pre=2.0, remove_after=1, clip="norm", max_norm=0.1)
