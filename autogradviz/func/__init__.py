"""``torch.func``: function transforms (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, functional_call,
vmap), as PyTorch 2.13 has them.

Built on the engine's two modes: ``grad``, ``vjp`` and ``jacrev`` run reverse mode (``autograd.grad`` with a graph
kept, so that transforms compose: ``grad(grad(f))``), ``jvp`` and ``jacfwd`` run forward mode
(``autograd.forward_ad``: one pass per tangent), and ``hessian`` is ``jacfwd(jacrev(f))``, forward over reverse.

Two differences from PyTorch's functorch, both said in docs/differences.md: ``vmap`` calls the function once per
example and stacks the results (the function sees one example at a time, with the same shapes, results and
errors, but ``.item()``, data-dependent Python control flow and random ops are not refused inside it as PyTorch
refuses them); and forward mode has one level, so ``jvp`` and ``jacfwd`` do not nest in one another.
"""
from .. import _creation
from .._tensor import Tensor
from ..autograd import forward_ad as _fwad
from ..autograd import grad_mode as _gm

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call", "vmap"]


def _autograd_grad(*args, **kwargs):
    from .. import autograd
    return autograd.grad(*args, **kwargs)


def _stack(ts, dim=0):
    from .. import stack
    return stack(ts, dim)


def _track(x):
    """``x`` as a tensor this transform differentiates against: a view of it when an outer transform tracks it
    already (so that its history, and its tangent, stay), else a detached copy that requires grad."""
    if x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_(True)


def _flatten(x):
    """The tensors of a pytree (a Tensor, or tuples, lists and dicts of them) and how to rebuild it."""
    if isinstance(x, Tensor):
        return [x], lambda ts: ts[0]
    if isinstance(x, dict):
        keys = list(x)
        parts = [_flatten(x[k]) for k in keys]
    elif isinstance(x, (tuple, list)):
        keys = None
        parts = [_flatten(e) for e in x]
    else:
        return [], lambda ts: x
    leaves = [t for p, _ in parts for t in p]
    sizes = [len(p) for p, _ in parts]

    def rebuild(ts):
        out, at = [], 0
        for (_, r), n in zip(parts, sizes):
            out.append(r(ts[at:at + n]))
            at += n
        if keys is not None:
            return dict(zip(keys, out))
        return type(x)(out)
    return leaves, rebuild


def _argnums(argnums, n, fn):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{fn}: Got argnums={argnums!r}. argnums must be int or Tuple[int, ...]")  # noqa: TRY004 (PyTorch's error type)
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    return single, tuple(a % n for a in nums)


def _done(t, keep):
    return t if keep or t is None else t.detach()


def _done_aux(aux, keep):
    """The auxiliary output, as the caller's level sees it: its tensors without this transform's history."""
    if keep:
        return aux
    if isinstance(aux, Tensor):
        return aux.detach()
    if isinstance(aux, (tuple, list)):
        return type(aux)(_done_aux(a, keep) for a in aux)
    if isinstance(aux, dict):
        return {k: _done_aux(v, keep) for k, v in aux.items()}
    return aux


def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)`` of a function with a scalar output: the gradient with respect to ``args[argnums]``."""
    def wrapper(*args, **kwargs):
        single, nums = _argnums(argnums, len(args), "grad_and_value(f)(*args)")
        flat = [_flatten(args[i]) for i in nums]
        keep = any(t.requires_grad for leaves, _ in flat for t in leaves)
        with _gm.enable_grad():
            args = list(args)
            tracked = []
            for i, (leaves, rebuild) in zip(nums, flat):
                ts = [_track(t) for t in leaves]
                tracked.append(ts)
                args[i] = rebuild(ts)
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: (output, "
                                       "aux) if has_aux is True")
                out, aux = out
            if not isinstance(out, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "  # noqa: TRY004 (PyTorch's error type)
                                   f"{type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs "
                                   "instead?")
            inputs = [t for ts in tracked for t in ts]
            gs = _autograd_grad(out, inputs, create_graph=True, allow_unused=True) if out.requires_grad \
                else [None] * len(inputs)
        gs = [_done(_creation.zeros_like(x) if g is None else g, keep) for g, x in zip(gs, inputs)]
        at, trees = 0, []
        for ts, (_, rebuild) in zip(tracked, flat):
            trees.append(rebuild(gs[at:at + len(ts)]))
            at += len(ts)
        gs = tuple(trees)
        g = gs[0] if single else gs
        value = _done(out, keep)
        if has_aux:
            return g, (value, _done_aux(aux, keep))
        return g, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a function with a scalar output, with respect to ``args[argnums]``."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g
    return wrapper


def _outputs(out, fn):
    is_tuple = isinstance(out, tuple)
    outs = out if is_tuple else (out,)
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{fn}: Expected f to be a function that has non-empty output (got output = {out!r})"  # noqa: TRY004 (PyTorch's error type)
                               if not outs else f"{fn}: Expected all outputs to be Tensors, got {type(o)}")
    return is_tuple, outs


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` gives the vector-Jacobian product, one per primal."""
    keep = any(isinstance(p, Tensor) and p.requires_grad for p in primals)
    with _gm.enable_grad():
        prims = tuple(_track(p) for p in primals)
        out = func(*prims)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) if "
                                   "has_aux is True")
            out, aux = out
        is_tuple, outs = _outputs(out, "vjp(f, *primals)")

    def vjp_fn(*cotangents):
        cts = cotangents[0] if len(cotangents) == 1 and is_tuple else cotangents
        cts = tuple(cts)
        with _gm.enable_grad():
            live = [(o, c) for o, c in zip(outs, cts) if o.requires_grad]
            if len(cts) != len(outs):
                raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                                   f"outputs to the function. cotangents: {len(cts)} tensors, primal output: "
                                   f"{len(outs)} tensors")
            for i, (o, c) in enumerate(zip(outs, cts)):
                if tuple(o.shape) != tuple(c.shape):
                    raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and "
                                       f"output[{i}] has a shape of {o.shape}.")
            gs = _autograd_grad([o for o, _ in live], prims, [c for _, c in live], retain_graph=True,
                                create_graph=True, allow_unused=True) if live else [None] * len(prims)
        return tuple(_done(_creation.zeros_like(p) if g is None else g, keep) for g, p in zip(gs, prims))

    result = out
    if not keep:
        result = tuple(o.detach() for o in outs) if is_tuple else outs[0].detach()
    if has_aux:
        return result, vjp_fn, _done_aux(aux, keep)
    return result, vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J tangents)``: the Jacobian-vector product, by forward-mode AD (one pass)."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "  # noqa: TRY004 (PyTorch's error type)
                           "call f(*primals).")
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        def spec(t):
            return "TreeSpec(tuple, None, [" + ",\n  ".join("*" for _ in t) + "])"
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {spec(primals)} and tangents with structure "
                           f"{spec(tangents if isinstance(tangents, tuple) else (tangents,))}")
    keep = any(p.requires_grad for p in primals)
    with _fwad.dual_level():
        duals = tuple(_fwad.make_dual(p, t) for p, t in zip(primals, tangents))
        out = func(*duals)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("jvp(f, primals, tangents): output of function f should be a tuple: (output, "
                                   "aux) if has_aux is True")
            out, aux = out
        is_tuple, outs = _outputs(out, "jvp(f, primals, tangents)")
        pairs = [_fwad.unpack_dual(o) for o in outs]
        ps = tuple(_done(p, keep) for p, _ in pairs)
        ts = tuple(_done(_creation.zeros_like(p) if t is None else t, keep) for p, t in pairs)
    res = (ps, ts) if is_tuple else (ps[0], ts[0])
    return res + (_done_aux(aux, keep),) if has_aux else res


def _basis(x):
    """The one-hot tangents of ``x``, one per element, in order."""
    for k in range(x.nelement()):
        v = _creation.zeros_like(x)
        v.view(-1)[k] = 1
        yield v


def _assemble(cols, outs, inputs, single):
    """cols[i][j]: the columns (one per element of input j) of output i's Jacobian -> out.shape + in.shape."""
    jac = []
    for i, o in enumerate(outs):
        row = []
        for j, x in enumerate(inputs):
            shape = tuple(o.shape) + tuple(x.shape)
            c = cols[i][j]
            row.append(_stack(c, -1).reshape(shape) if c else o.new_zeros(shape))
        jac.append(row[0] if single else tuple(row))
    return jac


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian of ``func`` with respect to ``args[argnums]``, by reverse mode: one vjp per output element."""
    def wrapper(*args):
        single, nums = _argnums(argnums, len(args), "jacrev(f)(*args)")
        keep = any(args[i].requires_grad for i in nums)
        with _gm.enable_grad():
            args = list(args)
            for i in nums:
                args[i] = _track(args[i])
            out = func(*args)
            aux = None
            if has_aux:
                out, aux = out
            is_tuple, outs = _outputs(out, "jacrev(f)(*args)")
            inputs = [args[i] for i in nums]
            rows = []
            for o in outs:
                per_input = [[] for _ in inputs]
                flat = o.reshape(-1)
                for k in range(o.nelement()):
                    gs = _autograd_grad(flat[k], inputs, retain_graph=True, create_graph=True, allow_unused=True) \
                        if o.requires_grad else [None] * len(inputs)
                    for j, (g, x) in enumerate(zip(gs, inputs)):
                        per_input[j].append(_creation.zeros_like(x) if g is None else g)
                row = []
                for j, x in enumerate(inputs):
                    shape = tuple(o.shape) + tuple(x.shape)
                    c = per_input[j]
                    row.append(_done(_stack(c, 0).reshape(shape) if c else o.new_zeros(shape), keep))
                rows.append(row[0] if single else tuple(row))
        jac = tuple(rows) if is_tuple else rows[0]
        return (jac, _done_aux(aux, keep)) if has_aux else jac
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` with respect to ``args[argnums]``, by forward mode: one pass per input element."""
    def wrapper(*args):
        single, nums = _argnums(argnums, len(args), "jacfwd(f)(*args)")
        keep = any(args[i].requires_grad for i in nums)
        # the primals require grad, so that a reverse transform inside (hessian's jacrev) carries their tangents
        prims = list(args)
        for i in nums:
            prims[i] = args[i].detach().requires_grad_(args[i].dtype.is_floating_point) if not keep else args[i]
        cols = None
        outs = None
        aux = None
        is_tuple = False
        for jn, i in enumerate(nums):
            for v in _basis(prims[i]):
                with _fwad.dual_level():
                    call = list(prims)
                    for jj in nums:
                        call[jj] = _fwad.make_dual(prims[jj], v if jj == i else _creation.zeros_like(prims[jj]))
                    with _gm.enable_grad():
                        out = func(*call)
                    if has_aux:
                        out, aux = out
                    is_tuple, os = _outputs(out, "jacfwd(f)(*args)")
                    if cols is None:
                        cols = [[[] for _ in nums] for _ in os]
                        outs = tuple(_fwad.unpack_dual(o).primal for o in os)
                    for oi, o in enumerate(os):
                        t = _fwad.unpack_dual(o).tangent
                        cols[oi][jn].append(_done(_creation.zeros_like(o) if t is None else t, keep))
        if cols is None:  # no input elements: empty Jacobians
            out = func(*prims)
            if has_aux:
                out, aux = out
            is_tuple, outs = _outputs(out, "jacfwd(f)(*args)")
            cols = [[[] for _ in nums] for _ in outs]
        jac = _assemble(cols, outs, [prims[i] for i in nums], single)
        jac = tuple(jac) if is_tuple else jac[0]
        return (jac, _done_aux(aux, keep)) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar function: ``jacfwd(jacrev(func, argnums), argnums)``, forward over reverse."""
    return jacfwd(jacrev(func, argnums), argnums)


def _locate(module, name):
    parts = name.split(".")
    for p in parts[:-1]:
        module = getattr(module, p)
    return module, parts[-1]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Call ``module`` with the given tensors in place of its parameters and buffers (the others stay its own)."""
    if isinstance(parameter_and_buffer_dicts, (list, tuple)):
        given = {}
        for d in parameter_and_buffer_dicts:
            given.update(d)
    else:
        given = dict(parameter_and_buffer_dicts)
    own = [n for n, _ in module.named_parameters()] + [n for n, _ in module.named_buffers()]
    if strict:
        unexpected = sorted(k for k in given if k not in own)
        missing = sorted(k for k in own if k not in given)
        if unexpected or missing:
            msg = f"Error(s) in reparametrizing for {type(module).__name__}:"
            if unexpected:
                msg += "\n\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + "."
            if missing:
                msg += "\n\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + "."
            raise RuntimeError(msg)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    swapped = []
    try:
        for name, value in given.items():
            owner, leaf = _locate(module, name)
            for store in (owner._parameters, owner._buffers):
                if leaf in store:
                    swapped.append((store, leaf, store[leaf]))
                    store[leaf] = value
                    break
            else:
                raise AttributeError(f"{type(owner).__name__} has no parameter or buffer named '{leaf}'")
        return module(*args, **(kwargs or {}))
    finally:
        for store, leaf, old in reversed(swapped):
            store[leaf] = old


def _fname(func):
    return getattr(func, "__name__", type(func).__name__)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Map ``func`` over a dimension of its inputs. Here a loop: ``func`` runs once per example (the slices of the
    inputs along ``in_dims``) and the results are stacked along ``out_dims``; see docs/differences.md."""
    def wrapper(*args):
        name = _fname(func)
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if len(dims) != len(args):
            def spec(n):
                return "TreeSpec(tuple, None, [" + ",\n  ".join("*" for _ in range(n)) + "])"
            raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): in_dims is not compatible with the "
                             f"structure of `inputs`. in_dims has structure {spec(len(dims))} but inputs has "
                             f"structure {spec(len(args))}.")
        size = None
        sizes = []
        for a, d in zip(args, dims):
            if d is None:
                continue
            if not isinstance(a, Tensor):
                raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} for an input "  # noqa: TRY004 (PyTorch's error type)
                                 f"but the input is of type {type(a)}. We cannot vmap over non-Tensor arguments, "
                                 "please use None as the respective in_dim")
            n = a.dim()
            if not -n <= d < n:
                raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} for some input, "
                                 f"but that input is a Tensor of dimensionality {n} so expected in_dim to satisfy "
                                 f"-{n} <= in_dim < {n}.")
            sizes.append(a.shape[d])
        if not sizes:
            raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): at least one input must be a Tensor "
                             "mapped over a dimension (in_dim not None)")
        if any(s != sizes[0] for s in sizes):
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        size = sizes[0]
        results = []
        is_tuple = False
        for b in range(size):
            call = [a if d is None else a.select(d, b) for a, d in zip(args, dims)]
            out = func(*call)
            is_tuple = isinstance(out, tuple)
            outs = out if is_tuple else (out,)
            for o in outs:
                if not isinstance(o, Tensor):
                    raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. "  # noqa: TRY004 (PyTorch's error type)
                                     "Did you mean to set out_dims= to None for output?")
            results.append(outs)
        od = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(results[0])
        stacked = tuple(_stack([r[i] for r in results], od[i]) for i in range(len(results[0])))
        return stacked if is_tuple else stacked[0]
    return wrapper
