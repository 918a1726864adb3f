"""torch.save / torch.load: files go both ways between autogradviz and PyTorch 2.13 (weights_only=True, the
default, on both sides), with shared storage, strides, every dtype, map_location, and PyTorch's errors."""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import autogradviz as agv

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _objects(lib):
    """The same objects built by both libraries."""
    base = lib.arange(12.).view(3, 4)
    p = lib.nn.Parameter(lib.tensor([[1.5, -2.0], [0.25, 4.0]]))
    frozen = lib.nn.Parameter(lib.ones(3), requires_grad=False)
    out = collections.OrderedDict()
    out["base"] = base
    out["row"] = base[1]                   # a view sharing base's storage, offset 4
    out["t"] = base.t()                    # non-contiguous, strides (1, 4)
    out["cols"] = base[:, ::2]             # strides (4, 2)
    out["expanded"] = lib.ones(3).expand(2, 3)
    out["scalar"] = lib.tensor(2.5)
    out["empty"] = lib.zeros(0)
    out["rg"] = lib.tensor([1.0, 2.0], requires_grad=True)
    out["p"] = p
    out["p_view"] = p[0]                   # a view of a Parameter (its storage)
    out["frozen"] = frozen
    for name in DTYPES:
        dt = getattr(lib, name)
        vals = [[1, 0], [3, 1]] if name != "bool" else [[True, False], [False, True]]
        if name in ("float32", "float64", "float16"):
            vals = [[1.5, -0.0], [float("inf"), float("nan")]]
        if name == "uint8":
            vals = [[1, 255], [0, 128]]
        if name in ("int64",):
            vals = [[-(2 ** 40), 2 ** 62], [0, -1]]
        out["dtype_" + name] = lib.tensor(vals, dtype=dt).t()
    out["containers"] = [1, -5, 2 ** 40, 1.5, None, True, "s", (1, (2, 3)), {"k": [lib.tensor([7])]},
                         lib.Size([2, 3]), lib.float64, lib.int8, lib.device("cpu"), {1, 2}, b"ab"]
    return out


def _describe(x):
    """Everything a learner can see of a loaded object, in plain Python."""
    if isinstance(x, (agv.Tensor, torch.Tensor)):
        return ("T", type(x).__name__, str(x.dtype), tuple(x.shape), tuple(x.stride()), x.storage_offset(),
                x.untyped_storage().nbytes(), x.requires_grad, x.is_leaf, x._version,
                np.asarray(x.detach().tolist()).tobytes() if x.numel() else b"")
    if isinstance(x, (agv.dtype, torch.dtype)):
        return ("dtype", str(x))
    if isinstance(x, (agv.Size, torch.Size)):
        return ("Size", type(x).__name__, tuple(x))
    if type(x).__name__ == "device" or type(x).__name__ == "_Device":
        return ("device", str(x))
    if isinstance(x, dict):
        return (type(x).__name__, [(k, _describe(v)) for k, v in x.items()])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_describe(v) for v in x])
    if isinstance(x, set):
        return ("set", sorted(x))
    return (type(x).__name__, x)


def _sharing(d):
    """Write into the loaded base and Parameter: which loaded views see it."""
    d["base"][1, 0] = 99.0
    with (torch.no_grad() if isinstance(d["p"], torch.Tensor) else agv.no_grad()):
        d["p"][0, 0] = 42.0
    return d["row"].tolist(), d["t"].tolist(), d["cols"].tolist(), d["p_view"].tolist()


def _roundtrip(saver, loader, tmp_path, **load_kw):
    f = tmp_path / "objects.pt"
    saver.save(_objects(saver), f)
    return loader.load(f, **load_kw)


@pytest.mark.parametrize("direction", ["agv->torch", "torch->agv", "agv->agv", "torch->torch"])
def test_objects_load_as_pytorch_loads_them(direction, tmp_path):
    saver, loader = [agv if s == "agv" else torch for s in direction.split("->")]
    got = _roundtrip(saver, loader, tmp_path)
    want = _roundtrip(torch, torch, tmp_path)
    assert _describe(got) == _describe(want)
    assert _sharing(got) == _sharing(want)


def test_every_dtype_keeps_its_bits(tmp_path):
    rng = np.random.default_rng(0)
    for name in DTYPES:
        arr = rng.integers(0, 256, size=96, dtype=np.uint8).view(np.dtype(name) if name != "bool" else np.uint8)
        if name == "bool":
            arr = arr % 2 == 0
        mine = agv.from_numpy(arr.copy()).view(2, -1).t()
        agv.save({"x": mine}, tmp_path / "m.pt")
        theirs = torch.load(tmp_path / "m.pt")["x"]
        assert theirs.numpy().tobytes() == mine.numpy().tobytes()
        assert theirs.stride() == mine.stride()
        torch.save({"x": theirs}, tmp_path / "t.pt")
        back = agv.load(tmp_path / "t.pt")["x"]
        assert back.numpy().tobytes() == theirs.numpy().tobytes() and back.dtype == mine.dtype


def test_pickle_records_are_pytorchs(tmp_path):
    # the same state_dict saved by both: the same records, and the same pickle bytes
    def sd(lib):
        d = collections.OrderedDict()
        d["w"] = lib.arange(6.).view(2, 3)
        d["wt"] = d["w"].t()
        d["b"] = lib.tensor([1, 2])
        return d
    agv.save(sd(agv), tmp_path / "m.pt")
    torch.save(sd(torch), tmp_path / "t.pt")
    zm, zt = zipfile.ZipFile(tmp_path / "m.pt"), zipfile.ZipFile(tmp_path / "t.pt")
    names_t = [n for n in zt.namelist() if not n.endswith("serialization_id")]
    assert zm.namelist() == [n.replace("t/", "m/", 1) for n in names_t]
    for n in names_t:
        assert zm.read(n.replace("t/", "m/", 1)) == zt.read(n), n
    # every record's data starts at a multiple of 64 bytes, as PyTorch's writer places it
    raw = (tmp_path / "m.pt").read_bytes()
    for info in zm.infolist():
        start = info.header_offset + 30 + len(info.filename) + int.from_bytes(raw[info.header_offset + 28:
                                                                                  info.header_offset + 30], "little")
        assert start % 64 == 0


def _nested(lib):
    inner = lib.nn.Sequential(lib.nn.Linear(4, 2), lib.nn.ReLU())
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), inner)


def test_a_modules_state_dict_carries_pytorchs_metadata():
    # PyTorch's state_dict() has a `_metadata` attribute: each module's version (BatchNorm's is 2), by its prefix
    for kw in ({}, {"prefix": "net."}):
        mine, theirs = _nested(agv).state_dict(**kw), _nested(torch).state_dict(**kw)
        assert list(mine) == list(theirs)
        assert mine._metadata == theirs._metadata
        assert list(mine._metadata) == list(theirs._metadata)
    # a destination given without `_metadata` gets none, in both
    for lib in (agv, torch):
        assert not hasattr(_nested(lib).state_dict(destination=collections.OrderedDict()), "_metadata")


def test_a_modules_state_dict_is_saved_as_pytorch_saves_it(tmp_path):
    # the same module: the same pickle bytes (values live in data/N; data.pkl holds keys, shapes and metadata)
    agv.save(_nested(agv).state_dict(), tmp_path / "m.pt")
    torch.save(_nested(torch).state_dict(), tmp_path / "t.pt")
    zm, zt = zipfile.ZipFile(tmp_path / "m.pt"), zipfile.ZipFile(tmp_path / "t.pt")
    assert zm.read("m/data.pkl") == zt.read("t/data.pkl")
    # and the metadata comes back on either side
    assert agv.load(tmp_path / "t.pt")._metadata == torch.load(tmp_path / "m.pt")._metadata == \
        _nested(torch).state_dict()._metadata


def test_file_object_and_archive_name(tmp_path):
    buf = io.BytesIO()
    agv.save(agv.ones(2), buf)
    assert zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()[0] == "archive/data.pkl"
    buf.seek(0)
    assert torch.load(buf).tolist() == [1.0, 1.0]
    buf = io.BytesIO()
    torch.save(torch.ones(2), buf)
    buf.seek(0)
    assert agv.load(buf).tolist() == [1.0, 1.0]


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))


def _train(lib, model, opt, steps=3):
    x = lib.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]])
    for _ in range(steps):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()
    return model(x)


@pytest.mark.parametrize("saver,loader", [(agv, torch), (torch, agv)], ids=["agv->torch", "torch->agv"])
def test_a_model_and_its_optimizer_go_across(saver, loader, tmp_path):
    # train a little, save model and Adam state, load into the other library, train on: the same numbers
    m = _mlp(saver)
    opt = saver.optim.Adam(m.parameters(), lr=0.01)
    _train(saver, m, opt)
    saver.save({"model": m.state_dict(), "opt": opt.state_dict(), "epoch": 3}, tmp_path / "ck.pt")
    ck = loader.load(tmp_path / "ck.pt")
    m2 = _mlp(loader)
    m2.load_state_dict(ck["model"])
    opt2 = loader.optim.Adam(m2.parameters(), lr=0.01)
    opt2.load_state_dict(ck["opt"])
    assert ck["epoch"] == 3
    for (k1, v1), (k2, v2) in zip(m.state_dict().items(), m2.state_dict().items()):
        assert k1 == k2 and v1.detach().numpy().tobytes() == v2.detach().numpy().tobytes()
    assert sorted(opt2.state_dict()["state"]) == sorted(opt.state_dict()["state"])
    out1 = _train(saver, m, opt, 2)
    out2 = _train(loader, m2, opt2, 2)
    np.testing.assert_allclose(out1.detach().numpy(), out2.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("map_location", ["cpu", "device", "dict", "fn_same", "fn_none"])
def test_map_location_on_the_cpu(map_location, tmp_path):
    torch.save({"a": torch.arange(3.)}, tmp_path / "t.pt")
    seen = []

    def fn_same(storage, loc):
        seen.append(loc)
        return storage

    def fn_none(storage, loc):
        seen.append(loc)

    def kw(lib):
        return {"cpu": "cpu", "device": lib.device("cpu"), "dict": {"cpu": "cpu"}, "fn_same": fn_same,
                "fn_none": fn_none}[map_location]
    mine = agv.load(tmp_path / "t.pt", map_location=kw(agv))
    theirs = torch.load(tmp_path / "t.pt", map_location=kw(torch))
    assert mine["a"].tolist() == theirs["a"].tolist()
    assert seen[: len(seen) // 2] == seen[len(seen) // 2:]


class Custom:
    def __init__(self):
        self.x = 1


def _error(fn):
    try:
        fn()
    except BaseException as e:     # noqa: BLE001 - the error is the result
        return type(e).__name__, str(e)
    return None


def _both_errors(path, **kw):
    return (_error(lambda: agv.load(path, **kw)), _error(lambda: torch.load(path, **kw)))


def _write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def _zip(tmp_path, name, records):
    p = tmp_path / name
    with zipfile.ZipFile(p, "w") as z:
        for n, d in records:
            z.writestr(n, d)
    return p


def _bad_files(tmp_path):
    np.save(tmp_path / "arr.npy", np.ones(3))
    torch.save({"x": torch.ones(2)}, tmp_path / "good.pt")
    good = zipfile.ZipFile(tmp_path / "good.pt")
    return {
        "missing": tmp_path / "nope.pt",
        "directory": tmp_path,
        "text": _write(tmp_path, "notes.txt", b"hello world, not a checkpoint\n"),
        "empty": _write(tmp_path, "empty.pt", b""),
        "npy": tmp_path / "arr.npy",
        "plain_pickle": _write(tmp_path, "p.pkl", pickle.dumps(3, protocol=2)),
        "plain_pickle_v4": _write(tmp_path, "p4.pkl", pickle.dumps({"a": 1}, protocol=4)),
        "zip_flat": _zip(tmp_path, "flat.zip", [("q.txt", "hi")]),
        "zip_no_version": _zip(tmp_path, "nover.zip", [("arc/x", "hi")]),
        "zip_no_data": _zip(tmp_path, "nodata.zip", [(n, good.read(n)) for n in good.namelist()
                                                     if not n.endswith("data/0")]),
        "zip_no_pkl": _zip(tmp_path, "nopkl.zip", [(n, good.read(n)) for n in good.namelist()
                                                   if not n.endswith("data.pkl")]),
    }


@pytest.mark.parametrize("case", ["missing", "directory", "text", "empty", "npy", "plain_pickle", "plain_pickle_v4",
                                  "zip_flat", "zip_no_version", "zip_no_data", "zip_no_pkl"])
@pytest.mark.parametrize("weights_only", [None, False])
def test_files_that_are_not_checkpoints_give_pytorchs_errors(case, weights_only, tmp_path):
    path = _bad_files(tmp_path)[case]
    kw = {} if weights_only is None else {"weights_only": weights_only}
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, theirs = _both_errors(path, **kw)
    if case == "plain_pickle_v4" and weights_only is False:
        assert mine == theirs == ("RuntimeError", "Invalid magic number; corrupt file?")
    assert mine == theirs
    assert theirs is not None


@pytest.mark.parametrize("saver", [agv, torch], ids=["saved_by_agv", "saved_by_torch"])
def test_weights_only_refuses_other_objects_with_pytorchs_message(saver, tmp_path):
    saver.save({"x": Custom(), "t": saver.ones(2)}, tmp_path / "c.pt")
    mine, theirs = _both_errors(tmp_path / "c.pt")
    assert mine == theirs and mine[0] == "UnpicklingError" and "Custom was not an allowed global" in mine[1]
    # weights_only=False loads it on both sides
    for lib in (agv, torch):
        got = lib.load(tmp_path / "c.pt", weights_only=False)
        assert got["x"].x == 1 and got["t"].tolist() == [1.0, 1.0]
    # an allow-listed class loads under weights_only too
    for lib in (agv, torch):
        with lib.serialization.safe_globals([Custom]):
            assert lib.load(tmp_path / "c.pt")["x"].x == 1


def test_weights_only_refuses_a_reduce_of_os_system(tmp_path):
    class Evil:
        def __reduce__(self):
            return (os.system, ("true",))
    torch.save(Evil(), tmp_path / "e.pt")
    mine, theirs = _both_errors(tmp_path / "e.pt")
    assert mine == theirs and "blocked" in mine[1]


@pytest.mark.parametrize("map_location", ["cuda", "cuda:0", "xyz"])
def test_map_location_elsewhere_gives_pytorchs_error(map_location, tmp_path):
    torch.save(torch.ones(2), tmp_path / "t.pt")
    mine, theirs = _both_errors(tmp_path / "t.pt", map_location=map_location)
    assert mine == theirs and mine[0] == "RuntimeError"


def test_pickle_module_with_weights_only_and_a_missing_parent(tmp_path):
    torch.save(torch.ones(2), tmp_path / "t.pt")
    assert _both_errors(tmp_path / "t.pt", weights_only=True, pickle_module=pickle)[0] == \
        _both_errors(tmp_path / "t.pt", weights_only=True, pickle_module=pickle)[1]
    # pickle_module alone means weights_only=False, on both sides
    assert agv.load(tmp_path / "t.pt", pickle_module=pickle).tolist() == [1.0, 1.0]
    errs = (_error(lambda: agv.save(agv.ones(1), tmp_path / "no" / "x.pt")),
            _error(lambda: torch.save(torch.ones(1), tmp_path / "no" / "x.pt")))
    assert errs[0] == errs[1] and errs[0][0] == "RuntimeError"


def test_legacy_format_written_by_pytorch_loads(tmp_path):
    base = torch.arange(6.)
    torch.save({"a": base, "v": base.view(2, 3).t(), "p": torch.nn.Parameter(torch.ones(2))}, tmp_path / "old.pt",
               _use_new_zipfile_serialization=False)
    got, want = agv.load(tmp_path / "old.pt"), torch.load(tmp_path / "old.pt")
    assert _describe(got) == _describe(want)
    got["a"][0] = 5.0
    assert got["v"].tolist()[0][0] == 5.0
