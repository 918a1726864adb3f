"""``torch.autograd.functional``: jacobian, hessian, vjp, jvp, hvp, vhp, built on ``autograd.grad``.

The same contract as PyTorch's: inputs are a Tensor or a tuple of Tensors (and results come back in the same
shape), ``create_graph`` keeps the results differentiable, ``strict`` raises where a result would be independent
of an input instead of filling in zeros, with PyTorch's messages. Forward-mode products (``jvp``, ``hvp``) use
the double-backward trick, as PyTorch does. ``vectorize=True`` gives the same values as the loop (PyTorch batches
the products with vmap; here they are computed one by one). ``strategy="forward-mode"`` runs forward-mode AD
(``forward_ad``), one pass per input element.
"""
import contextlib

from .. import _creation
from .._tensor import Tensor
from . import grad_mode as _gm

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# -- argument handling --------------------------------------------------------------------------------------------
def _tuple_of_tensors(x, what, fn):
    """(was it a tuple, the tuple); refuses anything that is not a Tensor or a tuple of Tensors."""
    was_tuple = isinstance(x, tuple)
    items = x if was_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if was_tuple else f"the given {what}"
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but {where} "
                            f"has type {type(el)}.")
    return was_tuple, items


def _unpack(res, was_tuple):
    """``res`` as the caller gave its arguments: the tuple, or its only element."""
    return res if was_tuple else res[0]


def _unpack2(res, out_tuple, in_tuple):
    if not in_tuple:
        res = tuple(r[0] for r in res)
    return res if out_tuple else res[0]


def _prepare(inputs, create_graph, need_graph):
    """Fresh tensors to differentiate against: a view keeps the caller's graph when ``create_graph``, otherwise a
    detached copy of the reference (requiring grad when ``need_graph``)."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(ts, create_graph):
    if isinstance(ts[0], Tensor) or ts[0] is None:
        return ts if create_graph else tuple(t.detach() for t in ts)
    return tuple(_finish(t, create_graph) for t in ts)


def _check_v(v, ref, ref_is_tuple):
    if len(v) != len(ref):
        if ref_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(ref)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, ref)):
        if a.size() != b.size():
            where = f"Entry {i} in " if ref_is_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.size()} but got {a.size()}.")


_STRICT_NO_GRAD = {
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs must be computed "
                "in a differentiable manner from the input when running in strict mode."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the user-provided "
                    "function. This is not allowed in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with respect "
                 "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                 "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                 "would be violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent of the input. "
                "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
                "and that the hessian depends on the inputs."),
}


def _strict_requires_grad(ts, kind, strict):
    if not strict:
        return
    for i, t in enumerate(ts):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT_NO_GRAD[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that require grad; None for inputs they do not reach."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    keep = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not keep:
        return (None,) * len(inputs)
    from . import grad
    return grad(tuple(o for o, _ in keep), inputs, tuple(g for _, g in keep), allow_unused=True,
                create_graph=create_graph, retain_graph=retain_graph)


_ZERO_FILL_STRICT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _zeros_for_none(grads, refs, strict, create_graph, stage):
    zeros_like = _creation.zeros_like
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_FILL_STRICT[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def _v_or_scalar(v, ref, ref_is_tuple, fn, create_graph, none_msg):
    if v is not None:
        _, v = _tuple_of_tensors(v, "v", fn)
        v = _prepare(v, create_graph, need_graph=False)
        _check_v(v, ref, ref_is_tuple)
        return v
    if len(ref) != 1 or ref[0].nelement() != 1:
        raise RuntimeError(none_msg)
    return None


def _second_phase_grad_mode(create_graph):
    return _gm.set_grad_enabled(True if create_graph else _gm.is_grad_enabled())


# -- the products -------------------------------------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``."""
    with _gm.enable_grad():
        in_tuple, inputs = _tuple_of_tensors(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        out_tuple, outputs = _tuple_of_tensors(outputs, "outputs of the user-provided function", "vjp")
        _strict_requires_grad(outputs, "outputs", strict)
        v = _v_or_scalar(v, outputs, out_tuple, "vjp", create_graph,
                         "The vector v can only be None if the user-provided function returns a single Tensor "
                         "with a single element.")
    with _second_phase_grad_mode(create_graph):
        res = _zeros_for_none(_grad(outputs, inputs, v, create_graph=create_graph), inputs, strict, create_graph,
                              "back")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(res, create_graph), in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``, by differentiating a vector-Jacobian product with respect to its vector."""
    zeros_like = _creation.zeros_like
    with _gm.enable_grad():
        in_tuple, inputs = _tuple_of_tensors(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _v_or_scalar(v, inputs, in_tuple, "jvp", create_graph,
                         "The vector v can only be None if the input to the user-provided function is a single "
                         "Tensor with a single element.")
        outputs = func(*inputs)
        out_tuple, outputs = _tuple_of_tensors(outputs, "outputs of the user-provided function", "jvp")
        _strict_requires_grad(outputs, "outputs", strict)
        dummy = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, dummy, create_graph=True)
        _strict_requires_grad(grad_inputs, "grad_inputs", strict)
    with (_gm.enable_grad() if create_graph else contextlib.nullcontext()):
        res = _zeros_for_none(_grad(grad_inputs, dummy, v, create_graph=create_graph), outputs, strict,
                              create_graph, "back_trick")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(res, create_graph), out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output i and input j a tensor of shape
    ``outputs[i].shape + inputs[j].shape``, one backward pass per output element."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and `strategy='
                                      '"forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
                               'not supported together (yet). Please either set `strict=False` or `strategy='
                               '"reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian "
                                      "isonly implemented for `vectorize=True`.")
        return _jacobian_forward(func, inputs)
    zeros_like = _creation.zeros_like
    from ..ops.shape import stack  # resolved at call time: autograd imports nothing from the op catalogue at load
    with _gm.enable_grad():
        in_tuple, inputs = _tuple_of_tensors(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        out_tuple, outputs = _tuple_of_tensors(outputs, "outputs of the user-provided function", "jacobian")
        _strict_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out.nelement()):
                vj = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, inp) in enumerate(zip(vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{j}. This is not allowed in strict mode.")
                        g = zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                           "This is not allowed in strict mode when create_graph=True.")
                    rows[j].append(g)
            jac.append(tuple(stack(r, 0).view(out.size() + inputs[j].size()) for j, r in enumerate(rows)))
        jac = _finish(tuple(jac), create_graph)
        return _unpack2(jac, out_tuple, in_tuple)


def _jacobian_forward(func, inputs):
    """``jacobian(strategy="forward-mode")``: one forward pass with dual inputs per input element, each giving one
    column of every output's Jacobian (PyTorch batches these passes with vmap; here they run one by one)."""
    from . import forward_ad as fwad
    zeros_like = _creation.zeros_like
    from ..ops.shape import stack  # found at call time: autograd imports nothing of the op catalogue at load
    in_tuple, inputs = _tuple_of_tensors(inputs, "inputs", "jacobian")
    # the primals require grad, so that a reverse pass inside func (hessian's inner jacobian) differentiates the
    # dual inputs themselves and its gradient carries their tangents (forward over reverse)
    primals = tuple(t.detach().requires_grad_(t.dtype.is_floating_point) for t in inputs)
    cols = None
    outputs = out_tuple = None
    for j, x in enumerate(primals):
        for k in range(x.nelement()):
            with fwad.dual_level():
                duals = []
                for jj, p in enumerate(primals):
                    v = zeros_like(p)
                    if jj == j:
                        v.view(-1)[k] = 1
                    duals.append(fwad.make_dual(p, v))
                with _gm.enable_grad():
                    res = func(*duals)
                out_tuple, outs = _tuple_of_tensors(res, "outputs of the user-provided function", "jacobian")
                if cols is None:
                    outputs = outs
                    cols = [[[] for _ in primals] for _ in outs]
                for i, o in enumerate(outs):
                    tangent = fwad.unpack_dual(o).tangent
                    cols[i][j].append(zeros_like(o) if tangent is None else tangent.detach())
    if cols is None:  # no input elements at all: PyTorch's empty Jacobians
        outputs = func(*inputs)
        out_tuple, outputs = _tuple_of_tensors(outputs, "outputs of the user-provided function", "jacobian")
        cols = [[[] for _ in primals] for _ in outputs]
    jac = []
    for i, o in enumerate(outputs):
        row = []
        for j, x in enumerate(primals):
            c = cols[i][j]
            shape = o.size() + x.size()
            row.append(stack(c, -1).reshape(shape) if c else zeros_like(o).new_zeros(shape))
        jac.append(tuple(row))
    return _unpack2(tuple(jac), out_tuple, in_tuple)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    in_tuple, inputs = _tuple_of_tensors(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        out = func(*inp)
        is_tuple, t_out = _tuple_of_tensors(out, "outputs of the user-provided function", "hessian")
        _strict_requires_grad(t_out, "outputs", strict)
        if is_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def grad_func(*inp):
        jac = jacobian(scalar_func, inp, create_graph=True)
        _strict_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(grad_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack2(res, in_tuple, in_tuple)


def _scalar_output(outputs, out_tuple, fn):
    if out_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain a single element")


def _hessian_setup(func, inputs, v, create_graph, strict, fn):
    """What ``vhp`` and ``hvp`` share: the inputs made ready, ``v`` checked, the scalar output and its gradient
    ``jac`` (built with a graph, so that it can be differentiated again). Runs under ``enable_grad``."""
    in_tuple, inputs = _tuple_of_tensors(inputs, "inputs", fn)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    v = _v_or_scalar(v, inputs, in_tuple, fn, create_graph,
                     "The vector v can only be None if the input to the user-provided function is a single "
                     "Tensor with a single element.")
    outputs = func(*inputs)
    out_tuple, outputs = _tuple_of_tensors(outputs, "outputs of the user-provided function", fn)
    _strict_requires_grad(outputs, "outputs", strict)
    _scalar_output(outputs, out_tuple, fn)
    jac = _grad(outputs, inputs, create_graph=True)
    _strict_requires_grad(jac, "jacobian", strict)
    return in_tuple, inputs, v, out_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar function."""
    with _gm.enable_grad():
        in_tuple, inputs, v, out_tuple, outputs, jac = _hessian_setup(func, inputs, v, create_graph, strict, "vhp")
    with _second_phase_grad_mode(create_graph):
        res = _zeros_for_none(_grad(jac, inputs, v, create_graph=create_graph), inputs, strict, create_graph,
                              "double_back")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(res, create_graph), in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar function, by the double-backward trick."""
    zeros_like = _creation.zeros_like
    with _gm.enable_grad():
        in_tuple, inputs, v, out_tuple, outputs, jac = _hessian_setup(func, inputs, v, create_graph, strict, "hvp")
        dummy = tuple(zeros_like(t, requires_grad=True) for t in inputs)
        double_back = _grad(jac, inputs, dummy, create_graph=True)
        _strict_requires_grad(jac, "hessian", strict)
    with _second_phase_grad_mode(create_graph):
        res = _zeros_for_none(_grad(double_back, dummy, v, create_graph=create_graph), inputs, strict, create_graph,
                              "double_back_trick")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(res, create_graph), in_tuple)
