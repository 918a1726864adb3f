"""gradcheck / gradgradcheck: compare analytical gradients with finite differences (use float64 inputs)."""
import numpy as np

from .._tensor import Tensor, _wrap
from .grad_mode import enable_grad


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _outputs(func, inputs):
    out = func(*inputs)
    return _as_tuple(out)


def _numerical_jacobian(func, inputs, out_index, eps):
    """Central differences: one column per input element."""
    outs = _outputs(func, inputs)
    n_out = outs[out_index]._data.size
    jacs = []
    for inp in inputs:
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            jacs.append(None)
            continue
        flat = inp._data.reshape(-1)
        J = np.zeros((flat.size, n_out))
        for k in range(flat.size):
            orig = flat[k]
            # (grad mode stays on: gradgradcheck's function itself calls autograd.grad)
            flat[k] = orig + eps
            plus = _outputs(func, inputs)[out_index]._data.astype(np.float64).reshape(-1).copy()
            flat[k] = orig - eps
            minus = _outputs(func, inputs)[out_index]._data.astype(np.float64).reshape(-1).copy()
            flat[k] = orig
            J[k] = (plus - minus) / (2 * eps)
        jacs.append(J)
    return jacs


def _analytical_jacobian(func, inputs, out_index):
    from . import grad as _grad
    outs = _outputs(func, inputs)
    out = outs[out_index]
    diff = [i for i in inputs if isinstance(i, Tensor) and i.requires_grad]
    n_out = out._data.size
    jacs = [np.zeros((i._data.size, n_out)) for i in diff]
    for j in range(n_out):
        go = np.zeros(out._data.shape, dtype=out._data.dtype)
        go.reshape(-1)[j] = 1
        gs = _grad(out, diff, _wrap(go), retain_graph=True, allow_unused=True)
        for J, g in zip(jacs, gs):
            if g is not None:
                J[:, j] = g._data.reshape(-1)
    it = iter(jacs)
    return [next(it) if isinstance(i, Tensor) and i.requires_grad else None for i in inputs]


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **kwargs):
    """True if the analytical gradients of ``func`` at ``inputs`` match finite differences."""
    inputs = _as_tuple(inputs)
    for i in inputs:
        if isinstance(i, Tensor) and i.requires_grad and i.dtype.name != "float64":
            import warnings
            warnings.warn(f"Input #{inputs.index(i)} requires gradient and is not a double precision floating point "
                          "or complex. This check will likely fail if all the inputs are not of double precision "
                          "floating point or complex. ", UserWarning, stacklevel=2)
    outs = _outputs(func, inputs)
    for oi, o in enumerate(outs):
        if not o.requires_grad:
            continue
        num = _numerical_jacobian(func, inputs, oi, eps)
        ana = _analytical_jacobian(func, inputs, oi)
        for ii, (n, a) in enumerate(zip(num, ana)):
            if n is None:
                continue
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if raise_exception:
                    raise GradcheckError(
                        f"Jacobian mismatch for output {oi} with respect to input {ii},\n"
                        f"numerical:{_wrap(n)}\nanalytical:{_wrap(a)}\n")
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **kwargs):
    """gradcheck applied to the gradient of ``func``: checks second derivatives."""
    from . import grad as _grad
    inputs = _as_tuple(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_wrap(rng.standard_normal(o._data.shape).astype(o._data.dtype)).requires_grad_(True)
                             for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_grad(*args):
        ins, gos = args[:n_in], args[n_in:]
        with enable_grad():  # the numerical Jacobian calls this under no_grad; the first grad needs a graph
            out = _outputs(func, ins)
            d = [i for i in ins if isinstance(i, Tensor) and i.requires_grad]
            gs = _grad(out, d, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grad, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
