"""Every local derivative an op's facts declare (``@facts(grads={input name: formula})``, which the narration
writes and evaluates) equals what the node's ``backward`` computes, for each input on its own: a program per
class, run once per input with only that input requiring grad, the formula evaluated on the node's saved values.

The narration finds input ``k``'s formula by its name (``narrate.input_name``); here the edge of each input is
found by the input tensor itself (its AccumulateGrad in ``next_functions``), so a name and an edge that disagree
fail too."""
import numpy as np
import pytest

import autogradviz as A
from autogradviz.autograd import node as K
from autogradviz.ops import arith
from autogradviz.viz import narrate

F = A.nn.functional


def _t(lo=-0.9, hi=0.9, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(lo, hi, size=(2, 3))


POS = {"lo": 0.3, "hi": 1.7}

# class name -> (program over named inputs, {input name: values}); the inputs in the op's order
PROGRAMS = {
    "AbsBackward0": (lambda i: i["self"].abs(), {"self": _t()}),
    "AcosBackward0": (lambda i: i["self"].acos(), {"self": _t()}),
    "AddBackward0": (lambda i: A.add(i["self"], i["other"], alpha=2.5), {"self": _t(), "other": _t(seed=1)}),
    "AddcmulBackward0": (lambda i: A.addcmul(i["self"], i["tensor1"], i["tensor2"], value=0.5),
                         {"self": _t(), "tensor1": _t(seed=1), "tensor2": _t(seed=2)}),
    "AsinBackward0": (lambda i: i["self"].asin(), {"self": _t()}),
    "AtanBackward0": (lambda i: i["self"].atan(), {"self": _t()}),
    "CeilBackward0": (lambda i: i["self"].ceil(), {"self": _t()}),
    "ClampBackward1": (lambda i: i["self"].clamp(-0.4, 0.5), {"self": _t()}),
    "CosBackward0": (lambda i: i["self"].cos(), {"self": _t()}),
    "CoshBackward0": (lambda i: i["self"].cosh(), {"self": _t()}),
    "DivBackward0": (lambda i: i["self"] / i["other"], {"self": _t(), "other": _t(seed=1, **POS)}),
    "DivBackward1": (lambda i: arith._sdiv(i["self"], 2.5), {"self": _t()}),
    "ErfBackward0": (lambda i: i["self"].erf(), {"self": _t()}),
    "Exp2Backward0": (lambda i: i["self"].exp2(), {"self": _t()}),
    "ExpBackward0": (lambda i: i["self"].exp(), {"self": _t()}),
    "Expm1Backward0": (lambda i: i["self"].expm1(), {"self": _t()}),
    "FloorBackward0": (lambda i: i["self"].floor(), {"self": _t()}),
    "FracBackward0": (lambda i: i["self"].frac(), {"self": _t()}),
    "HardtanhBackward0": (lambda i: F.hardtanh(i["self"], -0.4, 0.5), {"self": _t()}),
    "LerpBackward0": (lambda i: A.lerp(i["self"], i["end"], 0.3), {"self": _t(), "end": _t(seed=1)}),
    "LerpBackward1": (lambda i: A.lerp(i["self"], i["end"], i["weight"]),
                      {"self": _t(), "end": _t(seed=1), "weight": _t(seed=2)}),
    "Log10Backward0": (lambda i: i["self"].log10(), {"self": _t(**POS)}),
    "Log1PBackward0": (lambda i: i["self"].log1p(), {"self": _t(**POS)}),
    "Log2Backward0": (lambda i: i["self"].log2(), {"self": _t(**POS)}),
    "LogBackward0": (lambda i: i["self"].log(), {"self": _t(**POS)}),
    "MeanBackward0": (lambda i: i["self"].mean(), {"self": _t()}),
    "MulBackward0": (lambda i: i["self"] * i["other"], {"self": _t(), "other": _t(seed=1)}),
    "MulBackward1": (lambda i: arith._smul(i["self"], 2.5), {"self": _t()}),
    "NegBackward0": (lambda i: -i["self"], {"self": _t()}),
    "PowBackward0": (lambda i: i["self"] ** 3.0, {"self": _t(**POS)}),
    "PowBackward1": (lambda i: i["self"] ** i["exponent"], {"self": _t(**POS), "exponent": _t(seed=1)}),
    "PowBackward2": (lambda i: 2.5 ** i["exponent"], {"exponent": _t()}),
    "ReciprocalBackward0": (lambda i: i["self"].reciprocal(), {"self": _t(**POS)}),
    "ReluBackward0": (lambda i: i["self"].relu(), {"self": _t()}),
    "RemainderBackward0": (lambda i: i["self"] % 0.7, {"self": _t()}),
    "RoundBackward0": (lambda i: i["self"].round(), {"self": _t()}),
    "RoundBackward1": (lambda i: i["self"].round(decimals=1), {"self": _t()}),
    "RsqrtBackward0": (lambda i: i["self"].rsqrt(), {"self": _t(**POS)}),
    "RsubBackward1": (lambda i: 2.5 - i["self"], {"self": _t()}),
    "SigmoidBackward0": (lambda i: i["self"].sigmoid(), {"self": _t()}),
    "SignBackward0": (lambda i: i["self"].sign(), {"self": _t()}),
    "SiluBackward0": (lambda i: F.silu(i["self"]), {"self": _t()}),
    "SinBackward0": (lambda i: i["self"].sin(), {"self": _t()}),
    "SinhBackward0": (lambda i: i["self"].sinh(), {"self": _t()}),
    "SqrtBackward0": (lambda i: i["self"].sqrt(), {"self": _t(**POS)}),
    "SubBackward0": (lambda i: A.sub(i["self"], i["other"], alpha=2.5), {"self": _t(), "other": _t(seed=1)}),
    "SumBackward0": (lambda i: i["self"].sum(), {"self": _t()}),
    "TanBackward0": (lambda i: i["self"].tan(), {"self": _t()}),
    "TanhBackward0": (lambda i: i["self"].tanh(), {"self": _t()}),
    "TruncBackward0": (lambda i: i["self"].trunc(), {"self": _t()}),
}

# the formula language (``autograd.node.OpFacts``): Python arithmetic, comparisons, these functions and numbers
FUNCS = {"exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "sinh": np.sinh, "cosh": np.cosh,
         "sqrt": np.sqrt, "sign": np.sign, "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "pi": np.pi}


def test_every_class_that_declares_grads_has_a_program():
    declared = sorted(k for k, f in K._FACTS.items() if f.grads)
    assert len(declared) >= 46
    assert sorted(PROGRAMS) == declared


def _cases():
    return [(cls, name) for cls in sorted(PROGRAMS) for name in K.op_facts(cls).grads]


def _value(v):
    if v is None or v is K.NOT_KEPT:
        return None
    if isinstance(v, A.Tensor):
        return np.asarray(v._data, dtype=np.float64)
    if isinstance(v, (bool, int, float, np.number)):
        return np.float64(v)
    return None      # sizes, dims, flags: not part of a formula


@pytest.mark.parametrize("cls,name", _cases(), ids=[f"{c}-{n}" for c, n in _cases()])
def test_declared_derivative_equals_backward(cls, name):
    program, values = PROGRAMS[cls]
    facts = K.op_facts(cls)
    inputs = {k: A.tensor(v, dtype=A.float64, requires_grad=(k == name)) for k, v in values.items()}
    out = program(inputs)
    node = out.grad_fn
    assert node.name() == cls
    edges = [k for k, (nxt, _) in enumerate(node.next_functions)
             if nxt is not None and getattr(nxt, "variable", None) is inputs[name]]
    assert len(edges) == 1, node.next_functions     # the edge of this input, found by the tensor itself
    k = edges[0]
    assert narrate.input_name(facts, k) == name      # the narration reads this edge's formula under that name

    env = {n: _value(v) for n, v in node.saved_items()}
    env = {n: v for n, v in env.items() if v is not None}
    env.update(FUNCS)
    with np.errstate(all="ignore"):
        local = np.asarray(eval(facts.grads[name], {"__builtins__": {}}, env), dtype=np.float64)  # noqa: S307
    g = np.asarray(np.random.default_rng(7).uniform(0.5, 1.5, size=tuple(out.shape)))
    grads = node(A.tensor(g, dtype=A.float64))
    grads = grads if isinstance(grads, tuple) else (grads,)
    got = np.asarray(grads[k]._data, dtype=np.float64)
    want = np.broadcast_to(g * local, got.shape)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"{cls} {name}: {facts.grads[name]}")
