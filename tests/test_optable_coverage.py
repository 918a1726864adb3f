"""Coverage of the op table is measured, not counted: every public function, method and ``nn.functional`` function
of autogradviz is read (its signature) and each of its arguments must have a role in the op table, and each wrong
kind of that role its error row (tests/_support/optable.py). A new op without rows fails here."""
import inspect
import re
import types

from autogradviz.ops import _methods
import autogradviz.nn.functional as F
from _support import optable

ROW_IDS = {r.id for r in optable.rows()}
# arguments of autogradviz's own signatures that are no argument of PyTorch's (numpy's names, which PyTorch's parser
# also accepts; private knobs)
NUMPY_NAMES = {"axis", "keepdims"}
# arguments whose kinds have no error rows, each with the reason
NO_ERROR_ROWS = {
    "out": "autogradviz takes no out= tensors (docs/differences.md, On purpose)",
    "device": "only 'cpu' and CUDA's errors (test_vs_torch.cpu_only_device_idiom)",
    "non_blocking": "no effect on the CPU",
    "memory_format": "no effect: every tensor is contiguous or a view (docs/differences.md)",
    "sparse_grad": "no sparse tensors",
    "inplace": "in-place activations are their own methods (relu_), with rows",
    "size_average": "deprecated arguments, mapped to reduction= (test_nn)",
    "reduce": "deprecated arguments, mapped to reduction= (test_nn)",
    "reduction": "test_nn compares every reduction with PyTorch",
    "weight": "test_nn compares the class weights of the losses with PyTorch",
    "ignore_index": "test_nn compares ignore_index with PyTorch",
    "label_smoothing": "test_nn compares label_smoothing with PyTorch",
    "pos_weight": "test_nn compares pos_weight with PyTorch",
    "delta": "test_nn compares huber_loss's delta with PyTorch",
    "beta": "test_nn compares smooth_l1_loss's beta with PyTorch; addmm's beta is keyword-only there (a row)",
    "negative_slope": "leaky_relu's slope: test_nn",
    "alpha": "elu's alpha (add's and addmm's alpha have rows)",
    "approximate": "gelu's approximate: test_nn",
    "min_val": "hardtanh's bounds: test_nn",
    "max_val": "hardtanh's bounds: test_nn",
    "threshold": "softplus's threshold: test_nn",
    "stable": "argsort(stable=): the same order either way for the table's distinct values",
    "correction": "var/std(correction=): test_vs_torch's reduction cases",
    "rtol": "allclose's tolerances have rows under their PyTorch names",
    "atol": "allclose's tolerances have rows under their PyTorch names",
    "equal_nan": "allclose's equal_nan has rows",
    "copy": "to(copy=True): test_vs_torch",
    "requires_grad": "the new_* constructors' requires_grad: the factories' rows (programs)",
    "dtype": "the new_* constructors' and softmax's dtype: the factories' rows (programs)",
    "training": "dropout's flag has rows under PyTorch's name, train",
    "dim": "a dim that PyTorch's signature for this name does not have",
    "decimals": "round's decimals have rows",
}


def _public():
    out = []
    for name, fn in _methods.FUNCTIONS.items():
        out.append(("torch", name, fn))
    for name, fn in _methods.METHODS.items():
        if not name.startswith("__"):
            out.append(("Tensor", name, fn))
    for name, fn in vars(F).items():
        if isinstance(fn, types.FunctionType) and not name.startswith("_"):
            out.append(("F", name, inspect.unwrap(fn)))
    return out


def _ours(fn):
    try:
        params = list(inspect.signature(inspect.unwrap(fn)).parameters.values())
    except (TypeError, ValueError):
        return []
    # (an in-place method's ``*args`` go on to its op, whose arguments have their rows)
    return [p for p in params if p.kind is not p.VAR_KEYWORD and not p.name.startswith("_")
            and p.name not in NUMPY_NAMES and not (p.kind is p.VAR_POSITIONAL and p.name == "args")]


def _has_row(where, name, pname, kind):
    base = f"{where}.{name}:{pname}={kind}"
    return base in ROW_IDS or any(re.fullmatch(re.escape(base) + r"#\d+", r) for r in ROW_IDS if r.startswith(base))


# the next course's ops and layers (issue 25), merged after the table was written: compared with PyTorch in their
# own tests (test_next_ops.py, test_layers_vs_torch.py), not yet rows of the table. The list is exact: a name that
# gets rows must leave it, and a new public name without rows fails.
PENDING = set()


def test_every_public_name_has_rows():
    missing = []
    for where, name, fn in _public():
        infos = [o for o in optable.OPS if o.name == name and where in o.where]
        if not infos:
            if (where, name) not in optable.NOT_IN_TABLE:
                missing.append(f"{where}.{name}")
            continue
    assert sorted(set(missing) - PENDING) == [], f"public names with no rows in the op table: {missing}"
    assert sorted(PENDING - set(missing)) == [], "names that have rows now: take them off PENDING"


def test_every_argument_and_wrong_kind_has_a_row():
    """Each argument of each public signature maps to a role of the table (by name, else by position), and each
    wrong kind of that role has its error row."""
    gaps = []
    for where, name, fn in _public():
        infos = [o for o in optable.OPS if o.name == name and where in o.where]
        if not infos:
            continue
        table = {}
        for o in infos:
            for i, p in enumerate(o.params):
                table.setdefault(p.name, (i, p, o))
        positional = [p for p in max(infos, key=lambda o: len(o.params)).params]
        for i, p in enumerate(_ours(fn)):
            if i == 0 or p.name in table:
                tp = positional[0] if i == 0 else table[p.name][1]
            elif i < len(positional) and not positional[i].kwonly:
                tp = positional[i]
            elif p.name in NO_ERROR_ROWS:
                continue
            else:
                gaps.append(f"{where}.{name}({p.name}): no role in the table")
                continue
            if where == "Tensor" and tp is positional[0]:
                continue  # self
            for kind in optable.WRONG[tp.role]:
                skipped = any((tp.name, kind) in o.error_skip for o in infos)
                if not skipped and not _has_row(where, name, tp.name, kind):
                    gaps.append(f"{where}.{name}:{tp.name}={kind}")
    assert gaps == [], f"{len(gaps)} argument x wrong-kind pairs have no row: {gaps[:60]}"


def test_coverage_test_can_fail():
    assert not _has_row("torch", "mul", "other", "no-such-kind")
    assert _has_row("torch", "mul", "other", "None")
