"""The op table: every public op's sample inputs and error inputs, declared once (PyTorch tests itself this way,
with OpInfo's ``sample_inputs`` and ``error_inputs``; this table is written for autogradviz).

An entry (``OpInfo``) names an op, how it is reached (``torch.<name>``, ``Tensor.<name>`` (operators too:
``Tensor.__add__`` is ``a + b``), ``F.<name>``, ``_VF.<name>``, or ``property``: ``x.T``), PyTorch's
signature with a *role* for each argument, and one or more samples: argument values in which tensors are
``Arg`` specs, made afresh for each library (``T`` is ``torch`` or ``autogradviz``). The rows are generated:

* **sample rows** (``kind == "sample"``): each sample as written, and its variants: float64, every tensor argument
  in turn with ``requires_grad=True`` (the result's backward runs, the grads are compared) and, with two float
  tensor arguments or more, all of them at once (``-gradall``), non-contiguous inputs
  (a transposed copy), and for elementwise ops 0-d, 0-size and broadcast shapes;
* **error rows** (``kind`` names the wrong kind): each argument of the signature in turn replaced by each wrong
  kind its role has (``WRONG``): None, a str, a list, a wrong dtype, a wrong shape, a bad dim, a flag of the wrong
  type. PyTorch decides what each row must do: raise (type and message) or succeed (the same result).

``rows()`` gives every row as ``Row(id, op, kind, build)``; ``build(T)`` returns a thunk that runs the row with
``T``. The tests (``tests/test_optable.py``) run every row with both libraries; the coverage test reads each
public signature and fails when one of its arguments has no role here (and so no error rows).
"""
from dataclasses import dataclass, field

import numpy as np

# -- roles: what an argument is, and the wrong kinds it is given ---------------------------------------------------
# T   a tensor                            TN  a tensor or a number               TL  a sequence of tensors
# D   one dim                             DS  a dim or a tuple of dims (or None)
# B   a bool flag                         I   an int                             N   a number
# DT  a dtype                             SZ  sizes (*shape)                     X   anything else: no error rows
WRONG = {
    "T": ("None", "str", "list", "dtype", "shape"),
    "TN": ("None", "str", "list", "dtype", "shape"),
    "TL": ("None", "tensor", "str", "empty"),
    "D": ("dim_out", "dim_neg_out", "dim_str", "dim_None", "dim_float"),
    "DS": ("dim_out", "dim_dup", "dim_empty", "dim_None", "dim_str", "dim_list_out"),
    "B": ("flag_str", "flag_None", "flag_int"),
    "I": ("int_str", "int_None", "int_float"),
    "N": ("num_str", "num_None"),
    "DT": ("dtype_str", "dtype_numpy"),
    "SZ": ("size_str", "size_neg", "size_float"),
    "X": (),
}


@dataclass
class Arg:
    """A tensor made for each library: shape, dtype name, values from a fixed generator (the same on both sides)."""
    shape: tuple = (2, 3)
    dtype: str = "float32"
    lo: float = -1.0
    hi: float = 1.0
    seed: int = 0
    rg: bool = False
    noncontig: bool = False
    values: object = None  # explicit values (a list), else uniform(lo, hi)

    def make(self, T):
        if self.values is not None:
            arr = np.asarray(self.values)
        else:
            rng = np.random.default_rng(self.seed)
            arr = rng.uniform(self.lo, self.hi, size=self.shape)
            if self.dtype in ("int64", "int32", "uint8", "int8", "int16"):
                arr = np.floor(arr * 3)
            elif self.dtype == "bool":
                arr = arr > 0
        dt = getattr(T, self.dtype)
        if self.noncontig and arr.ndim >= 2:
            t = T.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)).tolist(), dtype=dt).transpose(-1, -2)
        else:
            t = T.tensor(arr.tolist(), dtype=dt)
        if self.rg:
            t.requires_grad_()
        return t

    def but(self, **kw):
        d = dict(self.__dict__)
        d.update(kw)
        return Arg(**d)


@dataclass
class DT:
    """A dtype by name, the library's own (``dtype=DT("float64")`` is ``T.float64``)."""
    name: str

    def make(self, T):
        return getattr(T, self.name)


@dataclass
class Gen:
    """A ``Generator`` seeded afresh for each library (both draw the same stream from the same seed)."""
    seed: int = 0

    def make(self, T):
        return T.Generator().manual_seed(self.seed)


def t(*shape, **kw):
    return Arg(shape=shape, **kw)


def idx(*shape, hi=2, seed=5):
    """An int64 index tensor with values in [0, hi)."""
    vals = np.random.default_rng(seed).integers(0, hi, size=shape).tolist()
    return Arg(shape=shape, dtype="int64", values=vals)


def mask(*shape, seed=6):
    vals = (np.random.default_rng(seed).uniform(size=shape) > 0.5).tolist()
    return Arg(shape=shape, dtype="bool", values=vals)


@dataclass
class Param:
    name: str
    role: str
    kwonly: bool = False


@dataclass
class OpInfo:
    name: str                  # PyTorch's name (torch.<name>, Tensor.<name>, F.<name>)
    sig: str                   # "input:T other:TN * alpha:N": PyTorch's names and roles, "*" before keyword-only
    samples: list              # each a (args, kwargs) of values and Arg specs
    where: tuple = ("torch", "Tensor")
    elementwise: bool = False  # 0-d, 0-size and broadcast variants
    grad: bool = True          # tensor arguments get requires_grad variants
    float64: bool = True
    noncontig: bool = True
    errors: bool = True        # error rows (False: an entry that adds samples to a name with its error rows)
    layout: bool = False       # also compare is_contiguous() of the results (views, matmul's outputs)
    error_skip: tuple = ()     # (param name, kind) pairs whose row is not generated, each with a reason in SKIP_WHY
    params: list = field(default_factory=list)

    def __post_init__(self):
        kw = False
        for tok in self.sig.split():
            if tok == "*":
                kw = True
                continue
            n, r = tok.split(":")
            if r not in WRONG:
                raise ValueError(f"{self.name}: unknown role {r!r}")
            self.params.append(Param(n, r, kw))


def _f(*args, **kwargs):
    return (args, kwargs)


A23 = t(2, 3)
B23 = t(2, 3, seed=1)
POS23 = t(2, 3, lo=0.2, hi=2.0)
I23 = t(2, 3, dtype="int64", lo=-2.0, hi=3.0, seed=3)

UNARY_FLOAT = ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid", "abs", "neg", "reciprocal", "rsqrt",
               "exp2", "expm1", "log1p", "log2", "log10", "sinh", "cosh", "asin", "acos", "atan", "erf", "floor",
               "ceil", "trunc", "frac", "sign", "square", "relu", "arcsin", "arccos", "arctan", "fix"]
_POSITIVE = {"log", "sqrt", "rsqrt", "log2", "log10", "reciprocal"}
_NO_GRAD = {"floor", "ceil", "trunc", "sign", "fix"}  # grads are zero: still compared

OPS = []


def op(*a, **k):
    o = OpInfo(*a, **k)
    OPS.append(o)
    return o


for _n in UNARY_FLOAT:
    op(_n, "input:T", [_f(POS23 if _n in _POSITIVE else (t(2, 3, lo=-0.9, hi=0.9) if _n in (
        "asin", "acos", "arcsin", "arccos") else A23))], elementwise=True)
op("logical_not", "input:T", [_f(A23)], elementwise=True, grad=False)
op("isnan", "input:T", [_f(Arg(values=[1.0, float("nan"), 0.0]))], grad=False)
op("isinf", "input:T", [_f(Arg(values=[1.0, float("inf"), -float("inf")]))], grad=False)
op("sign", "input:T", [_f(Arg(values=[1.0, float("nan"), -0.0, -2.0]))], grad=False)  # sign(nan) is 0

# -- binary arithmetic --------------------------------------------------------------------------------------------
for _n in ("add", "sub", "mul", "div", "subtract", "multiply", "divide", "true_divide"):
    op(_n, "input:T other:TN * rounding_mode:X" if _n in ("divide", "true_divide") else "input:T other:TN",
       [_f(A23, B23), _f(A23, 2.5), _f(A23, t(3, seed=2))], elementwise=True)
op("add", "input:T other:TN * alpha:N", [_f(A23, B23, alpha=2)])
op("sub", "input:T other:TN * alpha:N", [_f(A23, B23, alpha=0.5)])
op("div", "input:T other:TN * rounding_mode:X", [_f(A23, POS23, rounding_mode="floor"),
                                                 _f(I23, 2, rounding_mode="trunc")])
op("pow", "input:T exponent:TN", [_f(POS23, B23), _f(A23, 2), _f(POS23, 0.5)], elementwise=True)
for _n in ("floor_divide", "remainder"):
    op(_n, "input:T other:TN", [_f(A23, POS23), _f(I23, 2), _f(I23, Arg(values=[1, 2, 3]))], elementwise=True)
    # integer division by zero: PyTorch raises RuntimeError("ZeroDivisionError")
    op(_n, "input:T other:TN", [_f(I23, 0), _f(I23, Arg(values=[1, 0, 2]))], grad=False, float64=False,
       noncontig=False)
for _n in ("maximum", "minimum"):
    op(_n, "input:T other:T", [_f(A23, B23), _f(A23, t(3, seed=2)), _f(t(2), t(3))], elementwise=True)
for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    op(_n, "input:T other:TN", [_f(A23, B23), _f(A23, 0.5)], grad=False)
op("clamp", "input:T min:TN max:TN", [_f(A23, -0.5, 0.5), _f(A23, min=0.0), _f(A23, None, 0.25),
                                      _f(A23, t(seed=3, lo=-1, hi=0), t(seed=4, lo=0, hi=1))])
op("clip", "input:T min:TN max:TN", [_f(A23, -0.5, 0.5), _f(A23, t(seed=3, lo=-1, hi=0), t(seed=4, lo=0, hi=1))])
op("where", "condition:T input:TN other:TN", [_f(mask(2, 3), A23, B23), _f(mask(2, 3), A23, 0.0)], where=("torch",))
op("masked_fill", "input:T mask:T value:TN", [_f(A23, mask(2, 3), 0.5), _f(A23, mask(2, 3), t(seed=3))])
op("round", "input:T * decimals:I", [_f(t(2, 3, lo=-3, hi=3)), _f(t(2, 3, lo=-3, hi=3), decimals=1)])
op("allclose", "input:T other:T rtol:N atol:N equal_nan:B", [_f(A23, B23)], grad=False)
op("equal", "input:T other:T", [_f(A23, A23), _f(A23, B23)], grad=False)
op("tril", "input:T diagonal:I", [_f(t(3, 3)), _f(t(3, 3), 1)])
op("triu", "input:T diagonal:I", [_f(t(3, 3)), _f(t(3, 3), -1)])

# -- reductions ---------------------------------------------------------------------------------------------------
_R = [_f(A23), _f(A23, 0), _f(A23, 1, True), _f(A23, (0, 1)), _f(A23, dim=-1), _f(A23, (), False)]
op("sum", "input:T dim:DS keepdim:B * dtype:DT", _R + [_f(A23, dtype=None), _f(I23), _f(A23, dim=None)])
op("mean", "input:T dim:DS keepdim:B * dtype:DT", _R + [_f(A23, dim=None), _f(A23, dtype=None)])
op("prod", "input:T dim:D keepdim:B * dtype:DT", [_f(A23), _f(A23, 1), _f(A23, 0, True)])
op("var", "input:T dim:DS unbiased:B keepdim:B", [_f(A23), _f(A23, 1), _f(A23, (0, 1), True, True),
                                                  _f(A23, (), True)])
op("std", "input:T dim:DS unbiased:B keepdim:B", [_f(A23), _f(A23, 0), _f(A23, (), True)])
op("norm", "input:T p:X dim:DS keepdim:B", [_f(A23), _f(A23, 2, 1), _f(A23, 2, (0, 1), True), _f(A23, 2, ())])
op("logsumexp", "input:T dim:DS keepdim:B", [_f(A23, 1), _f(A23, (0, 1), True)])
op("amax", "input:T dim:DS keepdim:B", [_f(A23), _f(A23, 1), _f(A23, (0, 1), True)])
op("amin", "input:T dim:DS keepdim:B", [_f(A23), _f(A23, 0)])
op("max", "input:T dim:D keepdim:B", [_f(A23), _f(A23, 1), _f(A23, 0, True)])
op("min", "input:T dim:D keepdim:B", [_f(A23), _f(A23, 1)])
op("argmax", "input:T dim:D keepdim:B", [_f(A23), _f(A23, 1), _f(A23, 0, True)], grad=False)
op("argmin", "input:T dim:D keepdim:B", [_f(A23), _f(A23, 1)], grad=False)
op("cumsum", "input:T dim:D", [_f(A23, 1), _f(A23, 0), _f(t(), 0)])
op("all", "input:T dim:D keepdim:B", [_f(mask(2, 3)), _f(mask(2, 3), 1)], grad=False)
op("any", "input:T dim:D keepdim:B", [_f(mask(2, 3)), _f(mask(2, 3), 0, True)], grad=False)
op("softmax", "input:T dim:D", [_f(A23, 1), _f(A23, 0), _f(t(0), 0)])
op("log_softmax", "input:T dim:D", [_f(A23, 1), _f(A23, -1), _f(t(0), 0)])

# -- shapes -------------------------------------------------------------------------------------------------------
A234 = t(2, 3, 4)
op("reshape", "input:T shape:SZ", [_f(A23, (3, 2)), _f(A23, (-1,))], where=("torch",))
op("reshape", "input:T shape:SZ", [_f(A23, 3, 2), _f(A23, -1)], where=("Tensor",))
op("view", "input:T shape:SZ", [_f(A23, 3, 2), _f(A23, -1, 2)], where=("Tensor",), noncontig=False)
op("flatten", "input:T start_dim:D end_dim:D", [_f(A234), _f(A234, 1), _f(A234, 0, 1)])
op("transpose", "input:T dim0:D dim1:D", [_f(A23, 0, 1), _f(A234, -1, 0)])
op("t", "input:T", [_f(A23), _f(t(3))])
op("permute", "input:T dims:DS", [_f(A234, (2, 0, 1))], where=("torch",))
op("permute", "input:T dims:X", [_f(A234, 2, 0, 1)], where=("Tensor",))
op("squeeze", "input:T dim:D", [_f(t(1, 3, 1)), _f(t(1, 3, 1), 0), _f(t(1, 3, 1), -1)])
op("unsqueeze", "input:T dim:D", [_f(A23, 0), _f(A23, -1), _f(A23, 2)])
op("expand", "input:T sizes:SZ", [_f(t(1, 3), 2, 3), _f(t(1, 3), -1, 4, 3)], where=("Tensor",))
op("repeat", "input:T repeats:SZ", [_f(A23, 2, 1), _f(A23, 1, 2, 2)], where=("Tensor",))
op("flip", "input:T dims:DS", [_f(A23, (0,)), _f(A23, (0, 1))], where=("torch",))
op("roll", "input:T shifts:X dims:DS", [_f(A23, 1, 1), _f(A23, (1, 2), (0, 1))])
op("narrow", "input:T dim:D start:I length:I", [_f(A23, 1, 0, 2), _f(A23, 0, 1, 1)])
op("select", "input:T dim:D index:I", [_f(A23, 1, 2), _f(A23, 0, -1)], where=("Tensor",))
op("split", "tensor:T split_size_or_sections:X dim:D", [_f(A23, 2, 1), _f(A23, [1, 2], 1)])
op("chunk", "input:T chunks:I dim:D", [_f(A23, 2, 1), _f(A23, 2)])
op("unbind", "input:T dim:D", [_f(A23), _f(A23, 1)])
op("cat", "tensors:TL dim:D", [_f([A23, B23]), _f([A23, B23], 1), _f((A23, t(1, 3)), 0)], where=("torch",))
op("stack", "tensors:TL dim:D", [_f([A23, B23]), _f([A23, B23], 2)], where=("torch",))
op("gather", "input:T dim:D index:T", [_f(t(3, 3), 1, idx(3, 2, hi=3)), _f(t(3, 3), 0, idx(2, 3, hi=3))])
op("index_select", "input:T dim:D index:T", [_f(t(3, 3), 1, idx(2, hi=3)), _f(t(3, 3), 0, idx(4, hi=3))])
op("clone", "input:T", [_f(A23)])
op("contiguous", "input:T", [_f(A23)], where=("Tensor",))
op("expand_as", "input:T other:T", [_f(t(1, 3), A23)], where=("Tensor",))
op("view_as", "input:T other:T", [_f(A23, t(3, 2))], where=("Tensor",), noncontig=False)
op("reshape_as", "input:T other:T", [_f(A23, t(3, 2))], where=("Tensor",))
op("type_as", "input:T other:T", [_f(A23, I23)], where=("Tensor",))

# -- linear algebra -----------------------------------------------------------------------------------------------
op("mm", "input:T mat2:T", [_f(A23, t(3, 4, seed=2))])
op("bmm", "input:T mat2:T", [_f(t(2, 2, 3), t(2, 3, 4, seed=2))])
op("mv", "input:T vec:T", [_f(A23, t(3, seed=2))])
op("dot", "input:T tensor:T", [_f(t(3), t(3, seed=2))])
op("outer", "input:T vec2:T", [_f(t(2), t(3, seed=2))])
op("matmul", "input:T other:T", [_f(A23, t(3, 4, seed=2)), _f(t(3), t(3, seed=2)), _f(t(2, 2, 3), t(3)),
                                 _f(t(3), t(2, 3, 4, seed=2))])
op("addmm", "input:T mat1:T mat2:T * beta:N alpha:N", [_f(t(2, 4), A23, t(3, 4, seed=2)),
                                                       _f(t(4), A23, t(3, 4, seed=2), beta=0.5, alpha=2)])
op("matmul", "input:T other:T", [_f(t(2, 2, dtype="bool"), t(2, 2, dtype="bool", seed=3))], grad=False,
   float64=False)  # bool @ bool: PyTorch refuses

# -- dtype conversions --------------------------------------------------------------------------------------------
op("to", "input:T dtype:DT", [_f(A23, None), _f(I23, None)], where=("Tensor",), error_skip=(("dtype", "dtype_str"),))
op("float", "input:T", [_f(I23)], where=("Tensor",), grad=False)
op("double", "input:T", [_f(A23)], where=("Tensor",))
op("long", "input:T", [_f(A23)], where=("Tensor",), grad=False)
op("int", "input:T", [_f(A23)], where=("Tensor",), grad=False)
op("bool", "input:T", [_f(A23)], where=("Tensor",), grad=False)
op("half", "input:T", [_f(A23)], where=("Tensor",), grad=False)

# -- nn.functional ------------------------------------------------------------------------------------------------
_F = ("F",)
for _n in ("relu", "sigmoid", "tanh", "silu", "gelu", "elu", "relu6", "softsign", "softplus", "hardtanh",
           "leaky_relu"):
    op(_n, "input:T", [_f(A23)], where=_F)
op("softmax", "input:T dim:D", [_f(A23, 1), _f(A23, dim=0)], where=_F)
op("log_softmax", "input:T dim:D", [_f(A23, 1)], where=_F)
op("softmin", "input:T dim:D", [_f(A23, 1)], where=_F)
op("linear", "input:T weight:T bias:T", [_f(A23, t(4, 3, seed=2), t(4, seed=3)), _f(A23, t(4, 3, seed=2))],
   where=_F)
for _n in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
    op(_n, "input:T target:T", [_f(A23, B23)], where=_F)
op("binary_cross_entropy", "input:T target:T", [_f(t(2, 3, lo=0.1, hi=0.9), t(2, 3, lo=0.0, hi=1.0, seed=4))],
   where=_F)
op("binary_cross_entropy_with_logits", "input:T target:T", [_f(A23, t(2, 3, lo=0.0, hi=1.0, seed=4))], where=_F)
op("cross_entropy", "input:T target:T", [_f(A23, idx(2, hi=3))], where=_F)
op("nll_loss", "input:T target:T", [_f(A23, idx(2, hi=3))], where=_F)

# -- in place, constructors, the rest of Tensor's methods ---------------------------------------------------------
_T = ("Tensor",)
for _n in ("add_", "sub_", "mul_", "div_"):
    op(_n, "input:T other:TN", [_f(A23, B23), _f(A23, 2.0), _f(A23, t(3, seed=2))], where=_T, noncontig=False)
op("pow_", "input:T exponent:TN", [_f(POS23, 2.0), _f(POS23, B23)], where=_T, noncontig=False)
for _n in ("exp_", "neg_", "abs_", "relu_", "sigmoid_", "tanh_", "zero_"):
    op(_n, "input:T", [_f(A23)], where=_T, noncontig=False)
for _n in ("log_", "sqrt_"):
    op(_n, "input:T", [_f(POS23)], where=_T, noncontig=False)
op("clamp_", "input:T min:TN max:TN", [_f(A23, -0.5, 0.5), _f(A23, min=0.0),
                                       _f(A23, t(seed=3, lo=-1, hi=0), t(seed=4, lo=0, hi=1))], where=_T,
   noncontig=False)
op("fill_", "input:T value:TN", [_f(A23, 1.5), _f(A23, t(seed=3))], where=_T, noncontig=False)
op("copy_", "input:T src:T", [_f(A23, B23), _f(A23, t(3, seed=2))], where=_T, noncontig=False)
op("masked_fill_", "input:T mask:T value:TN", [_f(A23, mask(2, 3), 0.5)], where=_T, noncontig=False)
op("where", "input:T condition:T other:TN", [_f(A23, mask(2, 3), B23), _f(A23, mask(2, 3), 0.0)], where=_T)
op("flip", "input:T dims:X", [_f(A23, 0), _f(A23, 0, 1)], where=_T)
op("argsort", "input:T dim:D descending:B", [_f(A23), _f(A23, 0), _f(A23, 1, True)], grad=False)
for _n in ("new_zeros", "new_ones"):
    op(_n, "input:T size:SZ", [_f(A23, (2, 2)), _f(A23, 3)], where=_T, grad=False)
op("new_full", "input:T size:X fill_value:N", [_f(A23, (2, 2), 1.5)], where=_T, grad=False)
op("new_tensor", "input:T data:X", [_f(A23, [1.0, 2.0]), _f(I23, [[1, 2]])], where=_T, grad=False)
op("type", "input:T dtype:X", [_f(A23), _f(A23, "torch.DoubleTensor")], where=_T, grad=False)
op("cpu", "input:T", [_f(A23)], where=_T)
op("storage_offset", "input:T", [_f(A23)], where=_T, grad=False)
op("is_tensor", "obj:X", [_f(A23), _f(1.0)], where=("torch",), grad=False)
op("numel", "input:T", [_f(A23), _f(t())], where=("torch",), grad=False)
op("dropout", "input:T p:N training:B", [_f(A23, 0.5, False), _f(A23, 0.0)], where=_F)
op("relu_", "input:T", [_f(A23)], where=_F, grad=False, noncontig=False)

# -- the next course's ops (issue 25) -------------------------------------------------------------------------------
I4 = Arg(shape=(5,), dtype="int64", values=[0, 1, 1, 3, 1])
SPECIAL = Arg(shape=(2, 3), values=[[1.0, float("nan"), float("inf")], [-float("inf"), -2.0, 0.5]])
op("cumprod", "input:T dim:D * dtype:DT", [_f(A23, 1), _f(A23, 0), _f(t(), 0), _f(A23, 1, dtype=None)])
op("bincount", "input:T weights:T minlength:I", [_f(I4), _f(I4, t(5)), _f(I4, None, 6), _f(I4, minlength=2)],
   noncontig=False)
op("histc", "input:T bins:I min:N max:N", [_f(A23), _f(A23, 4), _f(A23, 4, -1, 1), _f(A23, bins=3, min=0.0, max=0.5)])
op("histogram", "input:T bins:X * range:X weight:T density:B",
   [_f(A23, 4), _f(A23, 3, range=(-1.0, 1.0)), _f(A23, 4, weight=B23), _f(A23, 4, density=True),
    _f(A23, Arg(shape=(3,), values=[-1.0, 0.0, 1.0]))], grad=False)
op("addcmul", "input:T tensor1:T tensor2:T * value:N", [_f(A23, B23, t(2, 3, seed=2)), _f(A23, B23, t(3, seed=2),
                                                                                       value=0.5)], elementwise=True)
op("lerp", "input:T end:T weight:TN", [_f(A23, B23, 0.25), _f(A23, B23, t(2, 3, lo=0, hi=1, seed=4))],
   elementwise=True)
op("nan_to_num", "input:T nan:N posinf:N neginf:N", [_f(SPECIAL), _f(SPECIAL, 0.5, 10.0, -10.0),
                                                     _f(SPECIAL, posinf=3.0)], elementwise=True)
op("isfinite", "input:T", [_f(SPECIAL), _f(I23)], grad=False)
op("isclose", "input:T other:T rtol:N atol:N equal_nan:B",
   [_f(A23, B23), _f(A23, A23), _f(SPECIAL, SPECIAL, 1e-5, 1e-8, True), _f(A23, B23, 0.1, 2.0)], grad=False)
op("sort", "input:T dim:D descending:B", [_f(A23), _f(A23, 0), _f(A23, 1, True), _f(A23, dim=0, descending=True)])
op("topk", "input:T k:I dim:D largest:B sorted:B", [_f(A23, 2), _f(A23, 1, 0), _f(A23, 2, 1, False),
                                                    _f(A23, 2, 1, True, True)])
op("unique", "input:T sorted:B return_inverse:B return_counts:B dim:D",
   [_f(I23), _f(I23, True, True, True), _f(I23, return_counts=True), _f(I23, True, False, False, 1)], grad=False)
op("multinomial", "input:T num_samples:I replacement:B * generator:X",
   [_f(t(2, 4, lo=0.1, hi=1.0), 2, generator=Gen(1)), _f(t(5, lo=0.1, hi=1.0), 8, True, generator=Gen(2))],
   grad=False, noncontig=False)
op("diag", "input:T diagonal:I", [_f(t(3)), _f(t(3, 3)), _f(t(3, 4), 1), _f(t(3), -1)])
op("trace", "input:T", [_f(t(3, 3)), _f(A23)])
op("diagonal", "input:T offset:I dim1:D dim2:D", [_f(t(3, 3)), _f(t(3, 4), 1), _f(A234, 0, 0, 2)])
op("repeat_interleave", "input:T repeats:TN dim:D * output_size:I",
   [_f(A23, 2, 1), _f(A23, 2), _f(A23, Arg(shape=(2,), dtype="int64", values=[1, 3]), 0),
    _f(A23, Arg(shape=(3,), dtype="int64", values=[1, 0, 2]), 1, output_size=3)])
# (always with indexing=: PyTorch warns once per process without it, which test_next_ops compares)
op("meshgrid", "tensors:TL * indexing:X", [_f([t(2), t(3, seed=1)], indexing="ij"),
                                           _f([t(2), t(3, seed=1)], indexing="xy")], where=("torch",))
op("einsum", "equation:X operands:T", [_f("ij,jk->ik", A23, t(3, 4, seed=2)), _f("ii->i", t(3, 3)),
                                       _f("ij->", A23), _f("bij,bjk->bik", t(2, 2, 3), t(2, 3, 4, seed=2)),
                                       _f("...j,j", A23, t(3, seed=2)), _f("i,j->ij", t(2), t(3, seed=2)),
                                       _f("ij,jk,kl->il", A23, t(3, 4, seed=2), t(4, 2, seed=3)),
                                       _f("ij,jk", [A23, t(3, 4, seed=2)])],
   where=("torch",))
# the sublist form: operand, its subscripts (0-25 are A-Z, 26-51 a-z, ... an ellipsis), ..., the output's
op("einsum", "operand:T sublist:X", [_f(A23, [0, 1], t(3, 4, seed=2), [1, 2], [0, 2]),
                                     _f(A23, [0, 1], t(3, 4, seed=2), [1, 2]), _f(t(3, 3), [30, 30]),
                                     _f(t(3, 3), [0, 0], []), _f(A23, [Ellipsis, 27]), _f(A23, [0, 60]),
                                     _f(A23, [0, "x"]), _f(A23, [0, 1], A23), _f(A23),
                                     _f(A23, [0, 1], t(3, 4, seed=2), [1, 2], [0, 3]),
                                     _f(A23, [0, 1], t(2, 4, seed=2), [1, 2])], where=("torch",))
# what torch.einsum calls: the operands as one list, the contraction order as pairs of indices (path=)
_EQ3 = ("ij,jk,kl->il", [A23, t(3, 4, seed=2), t(4, 2, seed=3)])
op("einsum", "equation:X tensors:TL * path:X",
   [_f(*_EQ3, path=[1, 2, 0, 1]), _f(*_EQ3, path=[2, 1, 1, 0]), _f(*_EQ3, path=[0, 2, 0, 1]), _f(*_EQ3),
    _f(*_EQ3, path=None), _f(*_EQ3, path=(0, 1, 0, 1)), _f(*_EQ3, path=[0, 5, 0, 1]), _f(*_EQ3, path=[0, 0, 0, 1]),
    _f(*_EQ3, path=[0, 1]), _f(*_EQ3, path="x"), _f(*_EQ3, path=[0.5, 1, 0, 1]),
    _f("ij,jk->ik", [A23, t(3, 4, seed=2)], path=[1, 0]), _f("bij,bjk,bkl->bil", [t(2, 2, 3), t(2, 3, 4, seed=2),
                                                                                 t(2, 4, 2, seed=3)], path=[0, 2, 0, 1])],
   where=("_VF",))
op("einsum", "equation:X operands:T * path:X", [_f("ij,jk->ik", A23, t(3, 4, seed=2), path=[0, 1])],
   where=("torch",), grad=False, float64=False, noncontig=False)  # torch.einsum takes no path=
_CONV = ("torch", "F")
op("conv1d", "input:T weight:T bias:T stride:I padding:X dilation:I groups:I",
   [_f(t(2, 2, 5), t(3, 2, 2, seed=2), t(3, seed=3)), _f(t(2, 2, 5), t(4, 1, 3, seed=2), None, 2, 1, 1, 2),
    _f(t(1, 2, 6), t(2, 2, 2, seed=2), padding="same", dilation=2)], where=_CONV)
op("conv2d", "input:T weight:T bias:T stride:X padding:X dilation:X groups:I",
   [_f(t(1, 2, 4, 4), t(3, 2, 2, 2, seed=2), t(3, seed=3)), _f(t(1, 2, 5, 5), t(2, 1, 3, 3, seed=2), None, 2, 1, 1, 2),
    _f(t(1, 1, 4, 4), t(1, 1, 3, 3, seed=2), padding="valid", stride=(1, 2))], where=_CONV)
op("layer_norm", "input:T normalized_shape:SZ weight:T bias:T eps:N",
   [_f(A23, (3,)), _f(A23, (3,), t(3, seed=2), t(3, seed=3)), _f(A234, (3, 4), t(3, 4, seed=2), None, 1e-3)],
   where=("F",))
op("layer_norm", "input:T normalized_shape:SZ weight:T bias:T eps:N cudnn_enable:B",
   [_f(A23, (3,), None, None, 1e-5, True), _f(A23, (3,), t(3, seed=2), t(3, seed=3), 1e-5, False)],
   where=("torch",))
op("one_hot", "tensor:T num_classes:I", [_f(I4), _f(I4, 5), _f(idx(2, 3, hi=4), 4)], where=_F, grad=False)
op("scaled_dot_product_attention",
   "query:T key:T value:T attn_mask:T dropout_p:N is_causal:B * scale:N enable_gqa:B",
   [_f(t(1, 2, 3, 4), t(1, 2, 3, 4, seed=2), t(1, 2, 3, 4, seed=3)),
    _f(t(1, 2, 3, 4), t(1, 2, 3, 4, seed=2), t(1, 2, 3, 4, seed=3), None, 0.0, True),
    _f(t(1, 2, 3, 4), t(1, 2, 5, 4, seed=2), t(1, 2, 5, 4, seed=3), mask(3, 5)),
    _f(t(2, 3, 4), t(2, 3, 4, seed=2), t(2, 3, 4, seed=3), t(3, 3, seed=4), scale=0.5)], where=_F)
op("embedding", "input:T weight:T padding_idx:I max_norm:N norm_type:N scale_grad_by_freq:B sparse:B",
   [_f(idx(2, 3, hi=4), t(4, 3, seed=2)), _f(idx(5, hi=4), t(4, 3, seed=2), 1),
    _f(idx(2, 3, hi=4), t(4, 3, seed=2), None, None, 2.0, True)], where=_F)
op("adaptive_avg_pool2d", "input:T output_size:X", [_f(t(1, 2, 4, 4), 2), _f(t(2, 5, 7), (2, 3)),
                                                    _f(t(1, 1, 4, 4), (None, 1))], where=_F)
op("avg_pool2d", "input:T kernel_size:X stride:X padding:X ceil_mode:B count_include_pad:B divisor_override:I",
   [_f(t(1, 2, 4, 4), 2), _f(t(1, 1, 5, 5), 3, 2, 1, True, False, 2), _f(t(2, 4, 4), (2, 1))], where=_F)
op("max_pool2d", "input:T kernel_size:X stride:X padding:X dilation:X ceil_mode:B return_indices:B",
   [_f(t(1, 2, 4, 4), 2), _f(t(1, 1, 5, 5), 3, 2, 1, 1, True, True), _f(t(2, 4, 4), (2, 1), dilation=1)], where=_F)
op("pad", "input:T pad:X mode:X value:N", [_f(A23, (1, 2)), _f(A23, (1, 0, 0, 1), "constant", 0.5),
                                           _f(t(1, 2, 3), (2, 1), "reflect"), _f(t(1, 2, 3), (1, 1), "replicate")],
   where=_F)
op("batch_norm", "input:T running_mean:T running_var:T weight:T bias:T training:B momentum:N eps:N",
   [_f(t(4, 3), t(3, seed=2), t(3, lo=0.5, hi=1.5, seed=3)),
    _f(t(4, 3), t(3, seed=2), t(3, lo=0.5, hi=1.5, seed=3), t(3, seed=4), t(3, seed=5), True, 0.2),
    _f(t(2, 3, 2, 2), None, None, None, None, True), _f(t(2, 3, 4), t(3, seed=2), t(3, lo=0.5, hi=1.5, seed=3),
                                                        eps=1e-3)], where=_F)

# -- moved from test_vs_torch.py's CASES (issue 23): operators, shapes and indexing, type promotion ----------------
# the binary operators on each pair of shapes (the shapes of CASES' binop_*), and with a Python number on each side
# (scalar_*: the reflected operators __radd__ ... are what ``2 + x`` calls)
_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((3,), ()), ((), (2, 3)), ((2, 1, 3), (4, 1))]
M23 = Arg(shape=(2, 3), values=[[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]])
M23POS = Arg(shape=(2, 3), values=[[1.0, 1.75, 2.5], [2.0, 0.75, 1.25]])  # abs(M23) + 0.5: a base for **
for _n in ("__add__", "__sub__", "__mul__", "__truediv__", "__pow__"):
    _lo = 0.5 if _n == "__pow__" else -1.0
    op(_n, "input:T other:TN", [_f(t(*sa, lo=_lo, hi=2.0, seed=1), t(*sb, lo=_lo, hi=2.0, seed=2)) for sa, sb in _PAIRS]
       + [_f(M23POS if _n == "__pow__" else M23, v) for v in (2, 0.5, -3)], where=_T)
for _n in ("__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rpow__"):
    op(_n, "input:T other:TN", [_f(M23, v) for v in (2, 0.5, -3)], where=_T)
# comparisons and logic as operators (a > 0, 1 < a, (a > 0) & (a < 1), ~(a > 0))
for _n in ("__gt__", "__lt__", "__ge__", "__le__", "__eq__", "__ne__"):
    op(_n, "input:T other:TN", [_f(M23, Arg(shape=(3,), values=[0.5, 0.25, 0.0])), _f(M23, 0.5), _f(M23, 1)],
       where=_T)
for _n in ("__and__", "__or__"):
    op(_n, "input:T other:T", [_f(mask(2, 3), mask(2, 3, seed=7))], where=_T, grad=False)
op("__invert__", "input:T", [_f(mask(2, 3))], where=_T, grad=False)
op("__neg__", "input:T", [_f(M23)], where=_T)
# the broadcast errors of the operators, and the size error of @ (CASES' broadcast_error, linalg_errors)
for _n in ("__add__", "__mul__", "__sub__", "__gt__"):
    op(_n, "input:T other:TN", [_f(t(2, 3), t(2, 4)), _f(t(2, 3), t(4)), _f(t(5, 1, 3), t(4, 2, 1))], where=_T,
       noncontig=False, errors=False)
# @ and matmul on the shapes of CASES' linalg_* and more_matmul_shapes (every requires_grad combination through
# -grad0, -grad1 and -gradall)
_MM = [((2, 3), (3, 4)), ((4, 2, 3), (1, 3, 2)), ((2, 3), (4, 3, 2)), ((3,), (2, 3, 4)), ((2, 2, 3), (3,)),
       ((2, 1, 2, 3), (3, 3, 2)), ((1, 2, 3), (4, 3, 2)), ((2, 2, 3), (3, 4)), ((4, 3), (3,)), ((3,), (3, 4)),
       ((2, 2, 3), (3, 2, 2)), ((2, 3), (4,))]
op("__matmul__", "input:T other:T", [_f(t(*sa, seed=21), t(*sb, seed=22)) for sa, sb in _MM], where=_T,
   layout=True)
op("matmul", "input:T other:T", [_f(t(2, 3, seed=3), t(3, seed=4)), _f(t(3, seed=3), t(3, 2, seed=4)),
                                 _f(t(2, 2, 3, seed=3), t(3, 4, seed=4)), _f(t(2, 2, 3, seed=3), t(2, 3, 4, seed=4))],
   errors=False, layout=True)
op("mm", "input:T mat2:T", [_f(A23, B23)], noncontig=False, errors=False)  # (2x3 and 2x3): the shapes error
op("pow", "input:TN exponent:T", [_f(2.0, t(2, seed=1)), _f(2, M23)], where=("torch",))  # a number as the base
op("addmm", "input:T mat1:T mat2:T", [_f(t(3), A23, A23.but(shape=(3, 2), seed=4)),
                                      _f(t(2, 1, 1), A23, t(3, 2, seed=4)), _f(t(2, 1), A23, t(3, 2, seed=4))],
   errors=False)
# max and min: ties share the gradient; the dim and keepdim spellings
op("max", "input:T dim:D keepdim:B", [_f(Arg(shape=(4,), values=[1.0, 3.0, 3.0, 2.0])),
                                      _f(Arg(shape=(2, 2), values=[[3.0, 3.0], [1.0, 2.0]]), 1),
                                      _f(M23, 1, keepdim=True)], errors=False)
op("min", "input:T dim:D keepdim:B", [_f(M23, dim=0, keepdim=True), _f(M23, 0)], errors=False)
op("pow", "input:T exponent:TN", [_f(M23, 3), _f(M23, 2)], errors=False)
op("clamp", "input:T min:TN max:TN", [_f(M23, max=0.3), _f(M23, min=0.0), _f(M23, -0.5, 0.5)], errors=False)
# shapes and views of a 3x4 leaf (CASES' shape_*), their errors (shape_errors, expand_and_addmm_errors_in_full)
X34 = t(3, 4, seed=6)
X43T = Arg(shape=(4, 3), seed=6, noncontig=True)  # x.t(): not contiguous
op("view", "input:T shape:SZ", [_f(X34, 3, 4), _f(X34, -1, 2), _f(X34, 5, 2), _f(X34, -1, -1), _f(X43T, 12)],
   where=_T, noncontig=False, errors=False, layout=True)
op("reshape", "input:T shape:SZ", [_f(X34, 4, 3), _f(X34, (2, -1)), _f(X43T, 12)], where=_T, errors=False, layout=True)
op("squeeze", "input:T dim:D", [_f(X34, 0), _f(t(1, 12, 1, seed=6))], errors=False, layout=True)
op("unsqueeze", "input:T dim:D", [_f(X34, 1), _f(X34, -1)], errors=False, layout=True)
op("expand", "input:T sizes:SZ", [_f(t(3, 1, seed=6), -1, 5), _f(X34, 2, 4), _f(t(3, 2, 2), 2, 2)], where=_T,
   errors=False, layout=True)
op("contiguous", "input:T", [_f(X43T)], where=_T, errors=False, layout=True)
op("sum", "input:T dim:DS keepdim:B", [_f(X34, 2)], where=_T, errors=False)
op("T", "input:X", [_f(X34), _f(t(3)), _f(X43T)], where=("property",), layout=True)
for _n, _a in (("flatten", ()), ("t", ()), ("transpose", (0, 1)), ("select", (1, 2))):
    op(_n, "input:T", [_f(X34, *_a), _f(X43T, *_a)], errors=False, layout=True,
       where=("Tensor",) if _n == "select" else ("torch", "Tensor"))
op("clone", "input:T", [_f(X34)], errors=False, layout=True, noncontig=False)  # (a copy of a view keeps its
# layout in PyTorch, memory_format=torch.preserve_format; here it is contiguous: docs/differences.md)
op("permute", "input:T dims:X", [_f(t(2, 2, 3, seed=6), 2, 0, 1)], where=_T, errors=False, layout=True)
_IDX = [1, (-1, -2), (slice(None), slice(1, 3)), (slice(None, None, 2), slice(1, None, 2)), (None, slice(None), None),
        [0, 2], ([0, 2, 0], [1, 1, 3]), (slice(1, None), [0, 3]), (Ellipsis, 1), mask(3, 4), slice(None), 3,
        (0, 0, 0)]
op("__getitem__", "input:T indices:X", [_f(X34, i) for i in _IDX], where=_T, layout=True)
# type promotion (CASES' promote_*): each pair of dtypes through the operators and functions
I3 = Arg(shape=(3,), dtype="int64", values=[1, 2, 3])
I2 = Arg(shape=(2,), dtype="int64", values=[2, 3])
F2 = Arg(shape=(2,), values=[1.0, 2.0])
def _D(dt, v, shape=None):
    return Arg(shape=shape if shape is not None else (len(v),) if isinstance(v, list) else (), dtype=dt, values=v)


op("__mul__", "input:T other:TN", [_f(I3, 1.5), _f(F2, _D("float64", 2.0)), _f(F2, _D("float64", [2.0])),
                                   _f(_D("int64", [1, 2]), _D("float64", 2.0)), _f(_D("int32", [1, 2]), 3),
                                   _f(_D("bool", [True]), _D("bool", [True])), _f(_D("bool", [True, False]), 0.5),
                                   _f(_D("float64", [1.0]), 2.5)], where=_T, noncontig=False, errors=False)
op("__add__", "input:T other:TN", [_f(_D("int64", [1, 2]), 3), _f(_D("int32", [1, 2]), _D("int64", [1, 2])),
                                   _f(_D("bool", [True, False]), 1), _f(_D("float16", [1.0]), _D("float32", [1.0])),
                                   _f(_D("uint8", [1]), _D("int8", [1]))], where=_T, noncontig=False, errors=False)
op("__truediv__", "input:T other:TN", [_f(I3, Arg(shape=(3,), dtype="int64", values=[2, 2, 2])),
                                       _f(_D("int64", [3]), 2)], where=_T, noncontig=False, errors=False)
op("__pow__", "input:T other:TN", [_f(I2, 0.5), _f(I2, 2), _f(_D("int64", [2]), -1), _f(_D("float32", [2.0]), -1)],
   where=_T, noncontig=False, errors=False)
op("__rpow__", "input:T other:TN", [_f(I2, 2)], where=_T, noncontig=False, errors=False)
op("exp", "input:T", [_f(_D("int64", [0, 1]))], noncontig=False, errors=False)
op("sqrt", "input:T", [_f(_D("int64", [4, 9]))], noncontig=False, errors=False)
op("sum", "input:T", [_f(_D("int64", [1, 2])), _f(_D("bool", [True, True]))], noncontig=False, errors=False)
op("mean", "input:T", [_f(_D("int64", [1, 2]))], noncontig=False, errors=False)
op("div", "input:T other:TN * rounding_mode:X", [_f(_D("int64", [7, -7]), 2, rounding_mode="floor"),
                                                 _f(_D("int64", [7, -7]), 2, rounding_mode="trunc")],
   where=("torch",), noncontig=False, errors=False)
# indexing a 3-d tensor with mixed indices (CASES' indexing_3d_mixed), and // and % as operators
# (floor_divide_and_remainder: their backward raises PyTorch's "derivative ... is not implemented" but for x % w)
Y234 = t(2, 3, 4, seed=11)
op("__getitem__", "input:T indices:X",
   [_f(Y234, i) for i in [(0, slice(None), [0, 1]), ([0, 1], slice(None), 0), (slice(None), [0, 1], 0),
                          ([0, 1], slice(None), [0, 1]), (Ellipsis, [0, 1]), (1, [0, 2]),
                          (slice(None), slice(1, None), [3]), mask(2, 3, 4, seed=12), (slice(None), None, 0,
                                                                                         slice(None, None, 2))]],
   where=_T, errors=False, layout=True)
X3 = Arg(shape=(3,), values=[1.5, -2.5, 3.0])
W3 = Arg(shape=(3,), values=[2.0, -2.0, 2.0])
for _n in ("__floordiv__", "__mod__"):
    op(_n, "input:T other:TN", [_f(X3, 2), _f(X3, Arg(shape=(3,), values=[2.0, 2.0, 2.0])), _f(X3, W3),
                                _f(Arg(shape=(2,), dtype="int64", values=[7, -7]), 2),
                                _f(Arg(shape=(2,), dtype="int64", values=[7, -7]), 3),
                                _f(Arg(shape=(2,), values=[7.0, -7.0]), 3), _f(Arg(shape=(2,), values=[7.0, -7.0]), 0),
                                _f(Arg(shape=(2,), values=[4.0, -4.0]), Arg(shape=(2,), values=[-2.0, 2.0]))],
       where=_T, noncontig=False)
for _n in ("__rfloordiv__", "__rmod__"):
    op(_n, "input:T other:TN", [_f(X3, 5), _f(Arg(shape=(2,), dtype="int64", values=[2, -2]), 7)], where=_T,
       noncontig=False)
op("remainder", "input:T other:TN", [_f(Arg(shape=(2,), dtype="int64", values=[7, 8]), 3)], where=_T,
   noncontig=False, errors=False)
op("floor_divide", "input:T other:TN", [_f(X3, 2)], where=_T, noncontig=False, errors=False)
# overloads and shapes that build a node of their own (tests/test_node_coverage.py): squeeze of a tuple of dims
# (SqueezeBackward2), nll_loss of a 4-d input (NllLoss2DBackward0), replicate padding of a 3-d and a 4-d input
# (ReplicationPad2DBackward0), unique of a float tensor requiring grad (Unique2Backward0, and with dim=
# UniqueDimBackward0: their backward raises PyTorch's "not implemented"), cross_entropy with class probabilities
# (its mean is a division by a number: DivBackward1), x[...] (AliasBackward0)
op("squeeze", "input:T dim:DS", [_f(t(1, 3, 1), (0, 2)), _f(t(1, 3, 1), (-1,)), _f(t(2, 1, 3), (0, 1))],
   errors=False, layout=True)
op("nll_loss", "input:T target:T", [_f(t(2, 3, 2, 2), idx(2, 2, 2, hi=3)),
                                    _f(t(2, 3, 2, 2), idx(2, 2, 2, hi=3), reduction="sum")], where=_F, errors=False)
op("pad", "input:T pad:X mode:X value:N", [_f(t(2, 3), (2, 1), "reflect"), _f(t(1, 2, 3), (1, 1, 1, 1), "replicate"),
                                           _f(t(1, 1, 2, 3), (1, 0, 2, 1), "replicate")], where=_F, errors=False)
UF5 = Arg(shape=(5,), values=[1.0, 2.0, 1.0, 3.0, 2.0])
UF32 = Arg(shape=(3, 2), values=[[1.0, 2.0], [0.5, 1.0], [1.0, 2.0]])
op("unique", "input:T sorted:B return_inverse:B return_counts:B dim:D",
   [_f(UF5), _f(UF5, True, True, True), _f(UF32, dim=0), _f(UF32, True, True, True, 0)], errors=False,
   noncontig=False)
op("cross_entropy", "input:T target:T", [_f(A23, t(2, 3, lo=0.0, hi=1.0, seed=4))], where=_F, errors=False)
op("__getitem__", "input:T indices:X", [_f(X34, Ellipsis)], where=_T, errors=False, layout=True)
# the factories (CASES' create_*): their dtypes, shapes and requires_grad as PyTorch infers them
_FACT = dict(where=("torch",), grad=False, float64=False, noncontig=False, errors=False)
op("tensor", "data:X", [_f([1, 2, 3]), _f([1, 2.0]), _f([True, False]), _f(3), _f([[1, 2], [3, 4]]), _f([]),
                        _f([True, 2]), _f([1, 2], dtype=DT("float64")), _f(np.array([1.0, 2.0])),
                        _f(np.array([1, 2], np.int32)), _f([[1, 2], [3]])], **_FACT)
op("ones", "size:X", [_f(2, 3), _f((2, 3)), _f(2, requires_grad=True)], **_FACT)
op("zeros", "size:X", [_f(2, dtype=DT("int64"))], **_FACT)
op("full", "size:X fill_value:X", [_f((2, 2), 7), _f((2,), 1.5), _f((1,), True)], **_FACT)
op("arange", "end:X", [_f(5), _f(0, 1, 0.25), _f(1, 10, 3), _f(2.5)], **_FACT)
op("eye", "n:X", [_f(3), _f(2, 3)], **_FACT)
op("linspace", "start:X end:X steps:X", [_f(0, 1, 5)], **_FACT)
op("zeros_like", "input:T", [_f(Arg(shape=(2,), dtype="int64", values=[1, 2])),
                             _f(Arg(shape=(2,), values=[1.0, 1.0], rg=True))], **_FACT)
op("ones_like", "input:T", [_f(Arg(shape=(1, 1), dtype="float64", values=[[1.0]]))], **_FACT)
op("full_like", "input:T fill_value:X", [_f(Arg(shape=(2,), dtype="int64", values=[1, 2]), 4)], **_FACT)
op("Tensor", "data:X", [_f([1, 2, 3]), _f([[1, 2, 3], [4, 5, 6]]), _f()], **_FACT)

# Public names the table leaves out, each with its reason (the coverage test reads this)
NOT_IN_TABLE = {
    ("Tensor", "cuda"): "raises 'Torch not compiled with CUDA enabled' whatever its arguments (test_vs_torch)",
    ("Tensor", "normal_"): "random values: the generators differ (tests/test_random.py compares the streams)",
    ("Tensor", "uniform_"): "random values: the generators differ (tests/test_random.py compares the streams)",
    ("Tensor", "new_empty"): "uninitialised values",
    ("Tensor", "resize_"): "uninitialised values (test_vs_torch's seed3_resize_ compares what is defined)",
    ("F", "mul"): "not a PyTorch name: nn.functional re-exports it for its own dropout",
    ("F", "flatten"): "not a PyTorch name (nn.Flatten's helper)",
    ("F", "identity"): "not a PyTorch name (nn.Identity's helper)",
    ("torch", "repeat"): "not a PyTorch name (test_catalogue's NOT_IN_PYTORCH)",
}


# the reasons for error_skip entries
SKIP_WHY = {("to", "dtype", "dtype_str"): "x.to('float64') reads a str as a device: its own row below (to_str)"}


# -- the wrong kinds, as values -----------------------------------------------------------------------------------
def _wrong(kind, orig, param):
    """The value that replaces ``orig`` for a row of ``kind`` (None: this kind does not apply to this value)."""
    if kind == "None":
        return None
    if kind in ("str", "dim_str", "flag_str", "int_str", "num_str", "dtype_str", "size_str"):
        return {"dtype_str": "float32", "flag_str": "yes"}.get(kind, "a")
    if kind == "list":
        return [1.0, 2.0]
    if kind == "dtype":
        if isinstance(orig, Arg):
            return orig.but(dtype="float64" if orig.dtype != "float64" else "int64")
        return None
    if kind == "shape":
        if isinstance(orig, Arg):
            return orig.but(shape=(4,), values=None)
        return None
    if kind == "tensor":  # a sequence argument given one tensor
        return A23
    if kind == "empty":
        return []
    if kind == "dim_out":
        return 5
    if kind == "dim_neg_out":
        return -5
    if kind == "dim_None":
        return None
    if kind == "dim_float":
        return 1.5
    if kind == "dim_dup":
        return (0, 0)
    if kind == "dim_empty":
        return ()
    if kind == "dim_list_out":
        return [0, 7]
    if kind == "flag_None":
        return None
    if kind == "flag_int":
        return 2
    if kind == "int_None":
        return None
    if kind == "int_float":
        return 1.5
    if kind == "num_None":
        return None
    if kind == "dtype_numpy":
        return np.float32
    if kind == "size_neg":
        return -2
    if kind == "size_float":
        return 1.5
    raise ValueError(kind)


# -- materialising and calling --------------------------------------------------------------------------------------
def materialise(v, T):
    if isinstance(v, (Arg, Gen, DT)):
        return v.make(T)
    if isinstance(v, list):
        return [materialise(x, T) for x in v]
    if isinstance(v, tuple):
        return tuple(materialise(x, T) for x in v)
    return v


def _fn(T, where, name):
    if where == "torch":
        return getattr(T, name)
    if where == "F":
        return getattr(T.nn.functional, name)
    if where == "_VF":
        return getattr(T._VF, name)
    return None


def call(T, where, name, args, kwargs):
    args = materialise(args, T)
    kwargs = {k: materialise(v, T) for k, v in kwargs.items()}
    if where == "Tensor":
        return getattr(args[0], name)(*args[1:], **kwargs), args, kwargs
    if where == "property":  # x.T, x.mT: an attribute, not a call
        return getattr(args[0], name), args, kwargs
    return _fn(T, where, name)(*args, **kwargs), args, kwargs


@dataclass
class Row:
    id: str
    op: OpInfo
    where: str
    kind: str
    args: tuple
    kwargs: dict
    backward: bool = False


def _tensor_positions(o, args, kwargs):
    out = []
    for i, v in enumerate(args):
        if isinstance(v, Arg):
            out.append(("a", i))
    for k, v in kwargs.items():
        if isinstance(v, Arg):
            out.append(("k", k))
    return out


def _replace(args, kwargs, pos, fn):
    args, kwargs = list(args), dict(kwargs)
    if pos[0] == "a":
        args[pos[1]] = fn(args[pos[1]])
    else:
        kwargs[pos[1]] = fn(kwargs[pos[1]])
    return tuple(args), kwargs


def _map_args(args, kwargs, fn):
    def m(v):
        if isinstance(v, Arg):
            return fn(v)
        if isinstance(v, list):
            return [m(x) for x in v]
        if isinstance(v, tuple):
            return tuple(m(x) for x in v)
        return v
    return tuple(m(a) for a in args), {k: m(v) for k, v in kwargs.items()}


def _variants(o, args, kwargs):
    """(suffix, args, kwargs, backward) for one sample."""
    yield "", args, kwargs, False
    if o.float64 and any(isinstance(a, Arg) and a.dtype == "float32" for a in list(args) + list(kwargs.values())):
        yield "-f64", *_map_args(args, kwargs, lambda a: a.but(dtype="float64") if a.dtype == "float32" else a), False
    if o.noncontig and any(isinstance(a, Arg) and len(a.shape) >= 2 for a in args):
        yield "-noncontig", *_map_args(args, kwargs, lambda a: a.but(noncontig=True)), False
    if o.grad:
        for p in _tensor_positions(o, args, kwargs):
            v = args[p[1]] if p[0] == "a" else kwargs[p[1]]
            if v.dtype.startswith("float"):
                yield f"-grad{p[1]}", *_replace(args, kwargs, p, lambda a: a.but(rg=True)), True
        floats = [p for p in _tensor_positions(o, args, kwargs)
                  if (args[p[1]] if p[0] == "a" else kwargs[p[1]]).dtype.startswith("float")]
        if len(floats) >= 2:  # every tensor argument at once (two leaves in one graph)
            a2, k2 = args, kwargs
            for p in floats:
                a2, k2 = _replace(a2, k2, p, lambda a: a.but(rg=True))
            yield "-gradall", a2, k2, True
        seqs = [i for i, a in enumerate(args) if isinstance(a, list) and a and isinstance(a[0], Arg)]
        for i in seqs:
            a2 = list(args)
            a2[i] = [x.but(rg=True) for x in args[i]]
            yield f"-grad{i}", tuple(a2), kwargs, True
    if o.elementwise:
        yield "-0d", *_map_args(args, kwargs, lambda a: a.but(shape=(), values=None)), o.grad
        yield "-0size", *_map_args(args, kwargs, lambda a: a.but(shape=(0, 3), values=None)), False
        ts = _tensor_positions(o, args, kwargs)
        if len(ts) >= 2:
            yield "-bcast", *_replace(args, kwargs, ts[0], lambda a: a.but(shape=(4, 1, 3), values=None)), False


def _error_rows(o, where, args, kwargs):
    """Each parameter of the signature, in turn, with each wrong kind of its role."""
    shift = 1 if where == "Tensor" else 0
    for i, p in enumerate(o.params):
        if where == "Tensor" and i == 0:
            continue  # self is the tensor the method is called on
        for kind in WRONG[p.role]:
            if (p.name, kind) in o.error_skip:
                continue
            if i < len(args) and not p.kwonly:
                orig = args[i]
                new = _wrong(kind, orig, p)
                if new is None and kind not in ("None", "dim_None", "flag_None", "int_None", "num_None"):
                    continue
                a2 = list(args)
                a2[i] = new
                yield kind, p.name, tuple(a2), dict(kwargs)
            else:
                orig = kwargs.get(p.name)
                new = _wrong(kind, orig, p)
                if new is None and kind not in ("None", "dim_None", "flag_None", "int_None", "num_None"):
                    continue
                k2 = dict(kwargs)
                k2[p.name] = new
                yield kind, p.name, tuple(args), k2
    del shift


def rows():
    out = []
    seen = set()
    for o in OPS:
        for where in o.where:
            base = f"{where}.{o.name}"
            for si, (args, kwargs) in enumerate(o.samples):
                for suffix, a, k, bw in _variants(o, args, kwargs):
                    rid = f"{base}[{si}]{suffix}"
                    n = 2
                    while rid in seen:
                        rid = f"{base}[{si}]{suffix}#{n}"
                        n += 1
                    seen.add(rid)
                    out.append(Row(rid, o, where, "sample", a, k, bw))
            # error rows: each parameter with each wrong kind, from the first sample (the one giving the most
            # arguments first) where the kind applies (a wrong dtype needs a tensor there)
            order = sorted(o.samples, key=lambda sm: -len(sm[0])) if o.errors else []
            done = set()
            for args0, kwargs0 in order:
                for kind, pname, a, k in _error_rows(o, where, args0, kwargs0):
                    if (pname, kind) in done:
                        continue
                    done.add((pname, kind))
                    rid = f"{base}:{pname}={kind}"
                    n = 2
                    while rid in seen:
                        rid = f"{base}:{pname}={kind}#{n}"
                        n += 1
                    seen.add(rid)
                    out.append(Row(rid, o, where, kind, a, k))
    return out


# -- programs: what is not one call of an op (flags, indexing, hooks, custom Functions) ------------------------------
PROGRAMS = []


def program(fn):
    PROGRAMS.append(fn)
    return fn


def _leaf(T):
    return T.tensor([1.0, 2.0, 3.0], requires_grad=True)


@program
def requires_grad__None(T):
    return T.ones(2).requires_grad_(None)


@program
def requires_grad__str(T):
    return T.ones(2).requires_grad_("yes")


@program
def requires_grad_set_0(T):
    x = T.ones(2)
    x.requires_grad = 0
    return x


@program
def requires_grad_set_str(T):
    x = T.ones(2)
    x.requires_grad = "yes"
    return x


@program
def requires_grad_set_True_on_non_leaf(T):
    y = _leaf(T) * 2
    y.requires_grad = True
    return y


@program
def requires_grad_set_False_on_non_leaf(T):
    y = _leaf(T) * 2
    y.requires_grad = False
    return y


@program
def requires_grad_kwarg_str(T):
    return T.ones(2, requires_grad="yes")


@program
def tensor_requires_grad_None(T):
    return T.tensor([1.0], requires_grad=None)


@program
def retain_graph_str(T):
    x = _leaf(T)
    (x * 2).sum().backward(retain_graph="yes")
    return x.grad


@program
def create_graph_str(T):
    x = _leaf(T)
    (x * 2).sum().backward(create_graph="yes")
    return x.grad


@program
def set_grad_enabled_str(T):
    return T.set_grad_enabled("no")


@program
def set_grad_enabled_int(T):
    with T.set_grad_enabled(0):
        return T.is_grad_enabled()


@program
def ones_dtype_str(T):
    return T.ones(2, dtype="float32")


@program
def ones_dtype_numpy(T):
    return T.ones(2, dtype=np.float32)


@program
def zeros_dtype_str(T):
    return T.zeros(2, dtype="float64")


@program
def tensor_dtype_str(T):
    return T.tensor([1.0], dtype="float32")


@program
def to_str(T):
    return T.ones(2).to("float64")


@program
def to_numpy_dtype(T):
    return T.ones(2).to(np.float64)


@program
def sum_dim_None_node(T):
    x = T.ones(2, 3, requires_grad=True)
    return x.sum(dim=None), x.sum(), x.sum(dim=())


@program
def sum_keepdim_str(T):
    return T.ones(2, 3).sum(0, keepdim="yes")


@program
def mean_keepdim_None(T):
    return T.ones(2, 3).mean(0, keepdim=None)


@program
def max_keepdim_str(T):
    return T.ones(2, 3).max(0, keepdim="yes")


# -- None, str, list where a tensor is expected ----------------------------------------------------------------------
@program
def mul_None_first(T):
    return T.mul(None, T.ones(2))


@program
def method_mm_None(T):
    return T.ones(2, 2).mm(None)


@program
def relu_None(T):
    return T.nn.functional.relu(None)


@program
def linear_module_None(T):
    T.manual_seed(0)
    return T.nn.Linear(3, 2)(None)


@program
def linear_module_str(T):
    T.manual_seed(0)
    return T.nn.Linear(3, 2)("a")


@program
def mse_loss_module_None(T):
    return T.nn.MSELoss()(None, T.ones(2))


@program
def op_times_list(T):
    return T.ones(3) * [1.0, 2.0, 3.0]


@program
def op_plus_str(T):
    return T.ones(3) + "a"


@program
def op_times_None(T):
    return T.ones(3) * None


@program
def op_None_times(T):
    return None * T.ones(3)


@program
def op_list_plus(T):
    return [1.0, 2.0, 3.0] + T.ones(3)


@program
def op_matmul_None(T):
    return T.ones(3) @ None


@program
def cat_one_tensor(T):
    return T.cat(T.ones(2, 3))


@program
def stack_one_tensor(T):
    return T.stack(T.ones(2, 3))


@program
def cat_list_with_None(T):
    return T.cat([T.ones(2), None])


# -- numpy must not leak through -----------------------------------------------------------------------------------
@program
def maximum_broadcast(T):
    return T.maximum(T.ones(2), T.ones(3))


@program
def minimum_broadcast(T):
    return T.minimum(T.ones(2, 3), T.ones(2))


@program
def max_empty(T):
    return T.ones(0).max()


@program
def amax_empty(T):
    return T.ones(0).amax()


@program
def softmax_empty(T):
    return T.ones(0).softmax(0), T.ones(0, 3).log_softmax(1)


@program
def sum_mean_empty(T):
    return T.ones(0).sum(), T.ones(0).mean(), T.ones(0, 3).sum(0), T.ones(0, 3).mean(1)


@program
def int_floordiv_zero(T):
    return T.tensor([1, 2]) // 0


@program
def int_mod_zero(T):
    return T.tensor([1, 2]) % 0


@program
def int_floordiv_zero_tensor(T):
    return T.tensor([1, 2]) // T.tensor([1, 0])


@program
def int_mod_zero_tensor(T):
    return T.tensor([4, 2]) % T.tensor([3, 0])


@program
def int_floordiv_zero_scalar_left(T):
    return 5 // T.tensor([1, 0])


@program
def float_floordiv_zero(T):
    return T.tensor([1.0, -1.0, 0.0]) // 0, T.tensor([1.0, -1.0]) % 0


@program
def gather_smaller_index(T):
    return T.gather(T.ones(3, 3), 1, T.zeros(2, 1, dtype=T.long))


@program
def gather_index_too_large(T):
    return T.gather(T.ones(2, 2), 1, T.zeros(3, 1, dtype=T.long))


@program
def gather_index_out_of_bounds(T):
    return T.gather(T.ones(2, 2), 1, T.tensor([[0], [5]]))


@program
def gather_float_index(T):
    return T.gather(T.ones(2, 2), 1, T.zeros(2, 1))


@program
def sign_nan(T):
    return T.sign(T.tensor([float("nan"), 1.0, -0.0]))


@program
def cumsum_0d(T):
    x = T.tensor(2.0, requires_grad=True)
    return x.cumsum(0), x.cumsum(-1)


@program
def outer_2d(T):
    return T.outer(T.ones(2, 3), T.ones(2))


@program
def outer_2d_second(T):
    return T.outer(T.ones(2), T.ones(2, 3))


@program
def bool_matmul(T):
    return T.ones(2, 2, dtype=T.bool) @ T.ones(2, 2, dtype=T.bool)


@program
def bool_mm(T):
    return T.mm(T.ones(2, 2, dtype=T.bool), T.ones(2, 2, dtype=T.bool))


@program
def int_matmul(T):
    return T.tensor([[1, 2], [3, 4]]) @ T.tensor([[1, 0], [0, 1]])


# -- indexing, in PyTorch's words --------------------------------------------------------------------------------
@program
def index_out_of_range(T):
    return T.ones(2, 3)[5]


@program
def index_out_of_range_dim1(T):
    return T.ones(2, 3)[:, 7]


@program
def index_negative_out_of_range(T):
    return T.ones(2, 3)[-3]


@program
def index_list_out_of_range(T):
    return T.ones(2, 3)[[0, 5]]


@program
def index_tensor_out_of_range(T):
    return T.ones(2, 3)[T.tensor([0, 2])]


@program
def index_bool_mask_wrong_shape(T):
    return T.ones(2, 3)[T.tensor([True, False, True])]


@program
def index_str(T):
    return T.ones(2, 3)["a"]


@program
def index_float(T):
    return T.ones(2, 3)[1.5]


@program
def index_too_many(T):
    return T.ones(2, 3)[0, 0, 0]


@program
def index_float_tensor(T):
    return T.ones(2, 3)[T.tensor([0.0, 1.0])]


@program
def setitem_out_of_range(T):
    x = T.ones(2, 3)
    x[5] = 1.0
    return x


@program
def setitem_wrong_shape(T):
    x = T.ones(2, 3)
    x[0] = T.ones(4)
    return x


@program
def index_lists_mismatch(T):
    return T.ones(3, 3)[[0, 1], [0, 1, 2]]


# -- hooks: what torch refuses, and the state it leaves ------------------------------------------------------------
def _hook_program(ret, nonleaf=False, second=True):
    def prog(T):
        x = _leaf(T)
        t = x * 1 if nonleaf else x
        h = t.register_hook(ret)
        states = []
        for _ in range(2 if second else 1):
            try:
                (t * 2).sum().backward()
                states.append(("ok", x.grad))
            except Exception as e:  # noqa: BLE001 - what torch raises, and the state after it, are compared
                states.append((type(e).__name__, str(e), x.grad))
        h.remove()
        (t * 2).sum().backward() if not nonleaf else (x * 2).sum().backward()
        states.append(("after remove", x.grad))
        return states
    return prog


def _ret_int(g):
    return 3


def _ret_str(g):
    return "a"


def _ret_list(g):
    return [1.0, 2.0, 3.0]


def _ret_shape(g):
    return g.new_ones(4)


def _ret_double(g):
    return g.double()


def _ret_scaled(g):
    return g * 10


for _name, _ret in (("int", _ret_int), ("str", _ret_str), ("list", _ret_list), ("shape", _ret_shape),
                    ("double", _ret_double), ("scaled", _ret_scaled)):
    for _nl in (False, True):
        _p = _hook_program(_ret, _nl)
        _p.__name__ = f"hook_returns_{_name}{'_nonleaf' if _nl else '_leaf'}"
        program(_p)


@program
def hook_lambda_name_in_message(T):
    x = _leaf(T)
    x.register_hook(lambda g: T.ones(2))
    (x * 2).sum().backward()


@program
def post_accumulate_hook_returns_value(T):
    x = _leaf(T)
    x.register_post_accumulate_grad_hook(lambda t: t * 2)
    try:
        (x * 2).sum().backward()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e), x.grad
    return x.grad


@program
def post_accumulate_hook_returns_int(T):
    x = _leaf(T)
    x.register_post_accumulate_grad_hook(lambda t: 5)
    try:
        (x * 2).sum().backward()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e), x.grad
    return x.grad


@program
def node_prehook_value_for_None_grad(T):
    x = _leaf(T)
    a, b = (x * 2).unbind(0)[:2]
    a.grad_fn.register_prehook(lambda gs: tuple(T.ones(()) for g in gs))
    try:
        a.backward()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e), x.grad
    return x.grad


@program
def node_hook_value_for_None_grad(T):
    x = _leaf(T)
    y = x * T.ones(3)
    y.grad_fn.register_hook(lambda gi, go: (gi[0], T.ones(3)))
    try:
        y.sum().backward()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e), x.grad
    return x.grad


@program
def node_prehook_returns_int(T):
    x = _leaf(T)
    y = x * 2
    y.grad_fn.register_prehook(lambda gs: 5)
    y.sum().backward()


@program
def node_prehook_wrong_count(T):
    x = _leaf(T)
    y = x * 2
    y.grad_fn.register_prehook(lambda gs: (gs[0], gs[0]))
    y.sum().backward()


@program
def node_prehook_wrong_shape(T):
    x = _leaf(T)
    y = x * 2
    y.grad_fn.register_prehook(lambda gs: (T.ones(4),))
    y.sum().backward()


@program
def node_hook_returns_int(T):
    x = _leaf(T)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: 4)
    y.sum().backward()


@program
def node_hook_wrong_shape(T):
    x = _leaf(T)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (T.ones(4), None))
    y.sum().backward()


@program
def node_hook_wrong_dtype(T):
    x = _leaf(T)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (gi[0].double(), None))
    y.sum().backward()


# -- custom Functions, create_graph --------------------------------------------------------------------------------
def _functions(T):
    class Scale(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b=2.0):
            ctx.b = b
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g * ctx.b, None

    class DirtyOther(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            b.mul_(2)
            ctx.mark_dirty(b)
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g, None

    return Scale, DirtyOther


@program
def function_apply_keyword(T):
    Scale, _ = _functions(T)
    x = _leaf(T)
    y = Scale.apply(x, b=3.0)
    y.sum().backward()
    return y, x.grad


@program
def function_mark_dirty_not_returned(T):
    _, Dirty = _functions(T)
    x = _leaf(T)
    b = T.ones(3)
    return Dirty.apply(x, b)


@program
def second_backward_after_create_graph(T):
    x = _leaf(T)
    (x ** 2).sum().backward(create_graph=True)
    g1 = x.grad
    (x ** 3).sum().backward(create_graph=True)
    return g1, x.grad, x.grad.grad_fn, x.grad is g1


@program
def second_backward_after_create_graph_then_plain(T):
    x = _leaf(T)
    (x ** 2).sum().backward(create_graph=True)
    (x * 3).sum().backward()
    return x.grad


@program
def function_apply_keyword_tensor(T):
    class MulAdd(T.autograd.Function):
        @staticmethod
        def forward(ctx, w, x, b):
            ctx.save_for_backward(w, x)
            return w * x + b

        @staticmethod
        def backward(ctx, g):
            w, x = ctx.saved_tensors
            return g * x, g * w, g
    w, x, b = (T.tensor(v, requires_grad=True) for v in (2.0, 3.0, 1.0))
    y = MulAdd.apply(w, x, b=b)
    y.backward()
    z = MulAdd.apply(w, x=x, b=b)
    z.backward()
    return y, z, w.grad, x.grad, b.grad


@program
def grad_with_graph_accumulates_in_place(T):
    x = _leaf(T)
    (x ** 2).sum().backward(create_graph=True)
    g1 = x.grad
    (x * 3).sum().backward()
    out = [x.grad, x.grad is g1, x.grad._version]
    (x ** 3).sum().backward(create_graph=True)
    return out + [x.grad, x.grad is g1]


@program
def assigned_grad_that_requires_grad_accumulates_in_place(T):
    x = _leaf(T)
    g = T.ones(3, requires_grad=True)
    x.grad = g
    (x * 3).sum().backward()
    y = _leaf(T)
    w = T.ones(3, requires_grad=True)
    y.grad = w * 2
    (y * 3).sum().backward()
    return x.grad, x.grad is g, x.grad._version, y.grad, y.grad._version


# -- what still differs, each with its reason (docs/differences.md, "Error messages"; tests/test_optable.py holds
# both lists: a row listed here must still differ, a row not listed must not)
MESSAGE_DIFFERENCES = {
    "torch.meshgrid:tensors=tensor": "a 2-D tensor in meshgrid's list: PyTorch's message prints the tensor as its "
                                     "C++ library prints one (' 0.2739 -0.4604 ...' and '[ torch.FloatTensor{2,3} "
                                     "]'); autogradviz prints its Python repr",
    "Tensor.expand:sizes=size_neg": "x.expand(-2, 4, 3): PyTorch fails while counting the elements ('numel: "
                                    "integer multiplication overflow'); autogradviz names the size it refuses, as "
                                    "PyTorch does for expand(-1) in a new leading dim",
    "Tensor.masked_fill_:mask=shape": "in the broadcast error PyTorch's in-place masked_fill_ calls the tensor a and "
                                      "the mask b, its out-of-place masked_fill the other way round; autogradviz's "
                                      "in-place op runs the out-of-place one and says it the out-of-place way",
}
VALUE_DIFFERENCES = {
    "torch.var[3]-grad0": "var(dim=()): PyTorch's forward reduces every dim but its backward counts no dim (n = 1, "
                          "2/(n-1) = inf, grad nan); autogradviz's grad is the derivative of the forward",
    "Tensor.var[3]-grad0": "as torch.var[3]-grad0",
    "torch.std[2]-grad0": "std(dim=()): as var(dim=())",
    "Tensor.std[2]-grad0": "as torch.std[2]-grad0",
    "F.binary_cross_entropy_with_logits:target=dtype": "float32 logits, float64 target: PyTorch's kernel mixes the "
                                                       "two precisions in its own order (the values agree to about "
                                                       "1e-7 relative, beyond the float64 ulp bound)",
}
