"""The op catalogue's declarations (autogradviz/ops/): every op is one entry in one file -- its node class with
``@facts`` and its forward function with ``@exports`` -- and the public names are built from those entries.

The name lists below were taken at commit 3ed1017, before the tables in ``ops/_methods.py`` were replaced by the
ops' own ``@exports`` declarations (they were equal right after): moving the declarations must not drop or rename
a public name, and a name added later must come from an op's own declaration. If a name is removed on purpose,
remove it from the list in the same commit."""
import inspect
import re
import sys
import types

import numpy as np
import pytest

import autogradviz as A
from autogradviz import ops
from autogradviz.autograd import node as K
from autogradviz.ops import _core, _methods

torch = pytest.importorskip("torch")
from _support import more_ops  # noqa: E402
from _support.saved import _saved_attrs  # noqa: E402


def _names(text):
    return set(text.split())


FUNCTIONS_AT_3ED1017 = _names("""
    abs acos add addmm all allclose amax amin any arccos arcsin arctan argmax argmin asin atan bmm cat ceil
    chunk clamp clip clone cos cosh cumsum div divide dot eq equal erf exp exp2 expm1 fix flatten flip floor
    floor_divide frac gather ge gt index_select is_tensor isinf isnan le log log10 log1p log2 log_softmax
    logical_not logsumexp lt masked_fill matmul max maximum mean min minimum mm mul multiply mv narrow ne neg
    norm numel outer permute pow prod reciprocal relu remainder repeat reshape roll round rsqrt sigmoid sign sin
    sinh softmax split sqrt square squeeze stack std sub subtract sum t tan tanh transpose tril triu true_divide
    trunc unbind unsqueeze var where
""")
METHODS_AT_3ED1017 = _names("""
    __abs__ __add__ __and__ __eq__ __floordiv__ __ge__ __getitem__ __gt__ __hash__ __iadd__ __imul__ __invert__
    __isub__ __itruediv__ __le__ __lt__ __matmul__ __mod__ __mul__ __ne__ __neg__ __or__ __pos__ __pow__
    __radd__ __rfloordiv__ __rmatmul__ __rmod__ __rmul__ __rpow__ __rsub__ __rtruediv__ __setitem__ __sub__
    __truediv__ abs abs_ acos add add_ all allclose amax amin any arccos arcsin arctan argmax argmin argsort
    asin atan bmm bool ceil chunk clamp clamp_ clip clone contiguous copy_ cos cosh cpu cuda cumsum div div_
    divide dot double eq equal erf exp exp2 exp_ expand expand_as expm1 fill_ fix flatten flip float floor
    floor_divide frac gather ge gt half index_select int isinf isnan le log log10 log1p log2 log_ log_softmax
    logical_not logsumexp long lt masked_fill masked_fill_ matmul max maximum mean min minimum mm mul mul_
    multiply mv narrow ne neg neg_ new_empty new_full new_ones new_tensor new_zeros norm normal_ permute pow
    pow_ prod reciprocal relu relu_ remainder repeat reshape reshape_as resize_ roll round rsqrt select sigmoid
    sigmoid_ sign sin sinh softmax split sqrt sqrt_ square squeeze std storage_offset sub sub_ subtract sum t
    tan tanh tanh_ to transpose tril triu true_divide trunc type type_as unbind uniform_ unsqueeze var view
    view_as where zero_
""")
TORCH_NAMESPACE_AT_3ED1017 = _names("""
    BoolTensor ByteTensor CharTensor DoubleTensor FloatTensor Generator HalfTensor IntTensor LongTensor
    ShortTensor Size Tensor abs acos add addmm all allclose amax amin any arange arccos arcsin arctan argmax
    argmin as_tensor asin atan autograd bmm bool cat ceil chunk clamp clamp_ clip clone cos cosh cuda cumsum
    default_generator detach device div divide dot double dtype empty empty_like enable_grad eq equal erf exp
    exp2 expm1 eye fix flatten flip float float16 float32 float64 floor floor_divide frac from_numpy full
    full_like gather ge get_default_dtype get_num_threads get_printoptions get_rng_state gt half index_select
    inference_mode initial_seed int int16 int32 int64 int8 is_anomaly_check_nan_enabled is_anomaly_enabled
    is_floating_point is_grad_enabled is_inference_mode_enabled is_tensor isinf isnan le linspace log log10
    log1p log2 log_softmax logical_not logsumexp long lt manual_seed masked_fill matmul max maximum mean min
    minimum mm mul multiply mv narrow ne neg nn no_grad norm normal numel ones ones_like ops optim outer permute
    pow printoptions prod promote_types rand rand_like randint randn randn_like randperm reciprocal relu
    remainder repeat reshape roll round rsqrt seed set_anomaly_enabled set_default_dtype set_grad_enabled
    set_num_threads set_printoptions set_rng_state short sigmoid sign sin sinh softmax split sqrt square squeeze
    stack std sub subtract sum t tan tanh tensor transpose tril triu true_divide trunc uint8 unbind unsqueeze
    utils var where zeros zeros_like
""")
TENSOR_ATTRIBUTES_AT_3ED1017 = _names("""
    H T __abs__ __add__ __and__ __array__ __array_priority__ __bool__ __class__ __deepcopy__ __delattr__ __dir__
    __doc__ __eq__ __float__ __floordiv__ __format__ __ge__ __getattribute__ __getitem__ __getstate__ __gt__
    __hash__ __iadd__ __imul__ __index__ __init__ __init_subclass__ __int__ __invert__ __isub__ __iter__
    __itruediv__ __le__ __len__ __lt__ __matmul__ __mod__ __module__ __mul__ __ne__ __neg__ __new__ __or__
    __pos__ __pow__ __radd__ __reduce__ __reduce_ex__ __repr__ __rfloordiv__ __rmatmul__ __rmod__ __rmul__
    __rpow__ __rsub__ __rtruediv__ __setattr__ __setitem__ __sizeof__ __slots__ __str__ __sub__ __subclasshook__
    __truediv__ __weakref__ _acc _base _data _grad _hooks _output_nr _requires_grad _retains_grad _vc _version
    abs abs_ acos add add_ all allclose amax amin any arccos arcsin arctan argmax argmin argsort asin atan
    backward bmm bool ceil chunk clamp clamp_ clip clone contiguous copy_ cos cosh cpu cuda cumsum data data_ptr
    detach detach_ device dim div div_ divide dot double dtype element_size eq equal erf exp exp2 exp_ expand
    expand_as expm1 fill_ fix flatten flip float floor floor_divide frac gather ge grad grad_fn gt half
    index_select int is_contiguous is_cuda is_floating_point is_inference is_leaf isinf isnan item le log log10
    log1p log2 log_ log_softmax logical_not logsumexp long lt mH mT masked_fill masked_fill_ matmul max maximum
    mean min minimum mm mul mul_ multiply mv narrow ndim ne neg neg_ nelement new_empty new_full new_ones
    new_tensor new_zeros norm normal_ numel numpy output_nr permute pow pow_ prod reciprocal register_hook
    register_post_accumulate_grad_hook relu relu_ remainder repeat requires_grad requires_grad_ reshape
    reshape_as resize_ retain_grad retains_grad roll round rsqrt select shape sigmoid sigmoid_ sign sin sinh
    size softmax split sqrt sqrt_ square squeeze std storage_offset stride sub sub_ subtract sum t tan tanh
    tanh_ to tolist transpose tril triu true_divide trunc type type_as unbind uniform_ unsqueeze untyped_storage
    var view view_as where zero_
""")

NOT_IN_PYTORCH = {"repeat"}  # torch.repeat: autogradviz has it, real PyTorch only has Tensor.repeat


def test_the_public_names_are_those_before_the_declarations_moved():
    """No name lost or renamed; a name added since comes from a new op's own ``@exports``."""
    assert FUNCTIONS_AT_3ED1017 - set(ops.FUNCTIONS) == set()
    assert set(ops.FUNCTIONS) - FUNCTIONS_AT_3ED1017 <= set(_core.TORCH)
    assert METHODS_AT_3ED1017 - set(ops.METHODS) == set()
    assert set(ops.METHODS) - METHODS_AT_3ED1017 <= set(_core.TENSOR)
    names = {n for n in dir(A) if not n.startswith("_") and not isinstance(getattr(A, n), types.ModuleType)}
    assert TORCH_NAMESPACE_AT_3ED1017 - {"autograd", "cuda", "nn", "ops", "optim", "utils"} - names == set()
    assert TENSOR_ATTRIBUTES_AT_3ED1017 - set(dir(A.Tensor)) == set()


def test_every_declared_name_is_pytorchs():
    """An independent check of the declarations: each ``torch.<name>`` and ``Tensor.<name>`` the catalogue exports
    exists in real PyTorch."""
    assert sorted(n for n in ops.FUNCTIONS if not hasattr(torch, n)) == sorted(NOT_IN_PYTORCH)
    assert [n for n in ops.METHODS if not hasattr(torch.Tensor, n)] == []


def test_tables_are_built_from_the_declarations():
    for name, fn in _core.TORCH.items():
        assert ops.FUNCTIONS[name] is fn
        assert getattr(ops, name) is fn
        # (through the argument checks, autogradviz/_checks.py, and numpy's axis= accepted)
        assert inspect.unwrap(getattr(A, name)) is fn
    for name, fn in _core.TENSOR.items():
        assert ops.METHODS[name] is fn
        attached = vars(A.Tensor)[name]
        assert inspect.unwrap(attached) is fn
    # what _methods.py still lists by hand is not one op's own name
    by_hand = set(ops.METHODS) - set(_core.TENSOR)
    assert all(n.startswith(("__", "new_")) or n.endswith("_") or n in _methods.ALIASES or n in ("view_as", "reshape_as", "where", "float", "double", "long", "int", "bool", "half", "type_as", "cpu") for n in by_hand), sorted(by_hand)
    assert set(ops.FUNCTIONS) - set(_core.TORCH) == set(_methods.ALIASES)


def test_both_names_are_one_function():
    for name in set(_core.TORCH) & set(_core.TENSOR):
        assert ops.FUNCTIONS[name] is ops.METHODS[name], name


def _node_classes():
    out, work = [], list(K.BackwardNode.__subclasses__())
    while work:
        c = work.pop()
        work.extend(c.__subclasses__())
        if c.__module__.startswith("autogradviz.ops."):
            out.append(c)
    return sorted(set(out), key=lambda c: (c.__module__, c.__name__))


def test_every_node_of_the_catalogue_is_a_class_statement():
    """One declaration style: every op's node is written as ``class XBackward0(...)`` in its catalogue file (no
    node classes made by factory functions), and nn/functional.py defines none."""
    classes = _node_classes()
    assert len(classes) > 80
    for c in classes:
        source = inspect.getsource(sys.modules[c.__module__])
        # (a class may take PyTorch's name after its statement: arith's ``NotImplemented`` node)
        assert re.search(rf"^class {c.__name__}\(|^\w+\.__name__ = .*\"{c.__name__}\"$", source, re.MULTILINE), \
            f"{c.__module__}.{c.__name__}"
    functional = inspect.getsource(A.nn.functional)
    assert "BackwardNode" not in functional and "make(" not in functional


def test_facts_are_declared_on_the_class_they_describe():
    for c in _node_classes():
        f = K.op_facts(c.__name__)
        if f is not None:
            assert f.name == c.__name__


@pytest.mark.parametrize("name", list(more_ops.CASES))
def test_a_node_keeps_one_slot_per_saved_name(name):
    """``make`` keeps exactly the slots the class names (FracBackward0 once kept an unnamed extra one)."""
    arr, fn = more_ops.CASES[name]
    out = more_ops._outs(fn(A, A.tensor(arr, requires_grad=True)))[0]
    n = out.grad_fn
    assert len(n._saved) == len(type(n)._saved_names), n.name()


# -- a new op: one entry in one file ---------------------------------------------------------------------------
@pytest.fixture
def cube_op():
    """docs/ops.md's walkthrough, followed literally: a throwaway op ``cube`` declared through the public path
    after import (as a lesson could), removed again afterwards."""
    from autogradviz.autograd.node import BackwardNode, facts, make
    from autogradviz.ops import exports

    @facts(fn="cube", grads={"self": "3 * self**2"})
    class CubeBackward0(BackwardNode):
        __slots__ = ()
        _saved_names = ("self",)

        def backward(self, g, s):
            x = s[0]
            return (g * (x * x * 3),)

    @exports("torch", "Tensor")
    def cube(a):
        return make(a._data ** 3, CubeBackward0, (a,), (a,))

    yield cube
    for table in (_core.TORCH, _core.TENSOR, ops.FUNCTIONS, ops.METHODS):
        table.pop("cube", None)
    for owner in (A, ops, A.Tensor):
        if "cube" in vars(owner):
            delattr(owner, "cube")
    K._FACTS.pop("CubeBackward0", None)


def test_a_new_op_is_one_entry(cube_op):
    x = A.tensor([0.5, -1.5, 2.0], requires_grad=True)
    y = A.cube(x)
    z = x.cube()
    assert y.grad_fn.name() == z.grad_fn.name() == "CubeBackward0"
    assert y.grad_fn.next_functions[0][0] is x.grad_fn or y.grad_fn.next_functions[0][0].variable is x
    assert [k for k, _ in y.grad_fn.saved_items()] == ["self"] and y.grad_fn._saved_self is x
    assert K.op_facts(y.grad_fn).grads == {"self": "3 * self**2"}
    (y.sum() + z.sum()).backward()
    tx = torch.tensor([0.5, -1.5, 2.0], requires_grad=True)
    (tx ** 3 * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="already declared"):
        _core.exports("torch", name="cube")(lambda a: a)


def test_the_new_op_is_gone_afterwards():
    assert not hasattr(A, "cube") and not hasattr(A.Tensor, "cube") and "cube" not in ops.FUNCTIONS


# -- the one test row: what else it checks -----------------------------------------------------------------------
def _root(T, name, dtype=None):
    arr, fn = more_ops.CASES[name]
    x = T.tensor(arr, requires_grad=True) if dtype is None else T.tensor(arr, dtype=dtype, requires_grad=True)
    return x, more_ops._outs(fn(T, x))[0]


@pytest.mark.parametrize("name", list(more_ops.CASES))
def test_saved_attributes_of_each_row_as_pytorch(name):
    """A row of the more-ops table (tests/_support/more_ops.py) also checks its node's ``_saved_<name>``
    attributes against PyTorch's."""
    ours, ref = _root(A, name)[1].grad_fn, _root(torch, name)[1].grad_fn
    assert ours.name() == ref.name()
    assert _saved_attrs(ours) == _saved_attrs(ref)


def _rows_with_declared_derivative():
    """The rows whose node declares its local derivatives; the others have nothing for the narration to check."""
    rows = []
    for name in more_ops.CASES:
        facts = K.op_facts(_root(A, name, A.float64)[1].grad_fn)
        if facts is not None and facts.grads:
            rows.append(name)
    return rows


DECLARED = _rows_with_declared_derivative()


def test_rows_declare_derivatives():
    """A guard: a catalogue that lost its facts would leave the test above with nothing to run (27 of 72 rows
    declared one when this was written)."""
    assert len(DECLARED) >= 20, DECLARED


@pytest.mark.parametrize("name", DECLARED)
def test_declared_derivative_of_each_row_matches_the_engine(name):
    """A row whose node declares local derivatives (``@facts(grads=...)``) also checks them against the engine's
    real gradient: the narration writes an equation only when the numbers add up."""
    from autogradviz.viz import BackwardStepper
    x, out = _root(A, name, A.float64)
    st = BackwardStepper(out.sum(), names={"x": x}, lang="en")
    text = next(f.text for f in st.frames if f.text.startswith(out.grad_fn.name()))
    wanted = sum(1 for nxt, _ in out.grad_fn.next_functions if nxt is not None)
    assert text.split("):", 1)[-1].count(" × ") == wanted, text
