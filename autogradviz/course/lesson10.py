"""Self-checks for lesson 10 (training a network)."""
import numpy as np

from .. import _creation as _c
from .. import _dtype, manual_seed, nn, optim
from .._tensor import Tensor
from . import Diagnosis, compare, exercise


def _data(n=40, seed=1):
    rng = np.random.default_rng(seed)
    pts = rng.normal(0, 1, (n, 2))
    labels = (pts[:, 0] * pts[:, 1] > 0).astype(np.int64)
    return _c.tensor(pts, dtype=_dtype.float64), _c.tensor(labels)


def _net(seed):
    manual_seed(seed)
    return nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2)).double()


def _params(m):
    return [p.detach().numpy().copy() for p in m.parameters()]


@exercise("10.1",
          hint_en="opt.zero_grad(); loss = loss_fn(model(X), y); loss.backward(); opt.step(); return loss.item().",
          hint_zh="opt.zero_grad()；loss = loss_fn(model(X), y)；loss.backward()；opt.step()；return loss.item()。")
def _check_1001(train_step):
    if not callable(train_step):
        return Diagnosis("the answer should be your function itself (answer = train_step).",
                         "答案应当是你的函数本身（answer = train_step）。")
    X, y = _data()
    loss_fn = nn.CrossEntropyLoss()
    ref = _net(5)
    ref_opt = optim.SGD(ref.parameters(), lr=0.5)
    want = []
    for _ in range(3):
        ref_opt.zero_grad()
        loss = loss_fn(ref(X), y)
        loss.backward()
        ref_opt.step()
        want.append(loss.item())
    mine = _net(5)
    start = _params(mine)
    opt = optim.SGD(mine.parameters(), lr=0.5)
    got = [train_step(mine, opt, X, y) for _ in range(3)]
    if got[0] is None:
        return Diagnosis("train_step returned None; it should return the loss as a float.",
                         "train_step返回了None；它应当以浮点数返回损失。")
    if isinstance(got[0], Tensor):
        return Diagnosis("train_step returned a tensor; return the loss as a Python float (loss.item()).",
                         "train_step返回了张量；请以Python浮点数返回损失（loss.item()）。")
    if not isinstance(got[0], float):
        return Diagnosis(f"train_step returned a {type(got[0]).__name__}; it should return a float.",
                         f"train_step返回了{type(got[0]).__name__}；它应当返回浮点数。")
    if all(np.array_equal(a, b) for a, b in zip(start, _params(mine))):
        return Diagnosis("the parameters did not change: opt.step() is missing.",
                         "参数没有变化：漏掉了opt.step()。")
    if not np.isclose(got[0], want[0], rtol=1e-9):
        return Diagnosis("the first step's loss is not the loss of the model before the step.",
                         "第一步返回的损失不是这一步更新之前模型的损失。")
    if not np.allclose(got, want, rtol=1e-9):
        return Diagnosis("the first step is right, the next ones are not: are the gradients cleared before each "
                         "backward()?",
                         "第一步对了，后面几步不对：每次backward()之前清空梯度了吗？")
    return True


def _dead(model, X):
    w = model.layer1.weight.detach().numpy()
    b = model.layer1.bias.detach().numpy()
    pre = X.detach().numpy() @ w.T + b                # from first principles, in numpy
    return int((np.maximum(pre, 0) == 0).all(axis=0).sum()), pre


@exercise("10.2",
          hint_en="a unit is dead if relu(layer1(X)) is 0 in its whole column: "
                  "int((torch.relu(probe.layer1(X)).max(dim=0).values == 0).sum()).",
          hint_zh="某个单元死了，就是relu(layer1(X))在它那一整列都是0："
                  "int((torch.relu(probe.layer1(X)).max(dim=0).values == 0).sum())。")
def _check_1002(answer, probe, X):
    dead, pre = _dead(probe, X)
    if isinstance(answer, (int, np.integer)) and not isinstance(answer, bool):
        if answer == pre.shape[1] - dead and answer != dead:
            return Diagnosis("that is the number of units that are still alive.", "这是仍然活着的单元数。")
        if answer == int((pre <= 0).sum()) and answer != dead:
            return Diagnosis("that counts zero outputs (point by unit), not units that are zero for every point.",
                             "这数的是输出为0的次数（点×单元），而不是对每个点都为0的单元。")
    return compare(answer, dead, want="int") or True


@exercise("10.3",
          hint_en="with torch.no_grad(): predicted = model(X).argmax(dim=1); "
                  "return (predicted == y).double().mean().item().",
          hint_zh="with torch.no_grad()：predicted = model(X).argmax(dim=1)；"
                  "return (predicted == y).double().mean().item()。")
def _check_1003(accuracy):
    if not callable(accuracy):
        return Diagnosis("the answer should be your function itself (answer = accuracy).",
                         "答案应当是你的函数本身（answer = accuracy）。")
    X, y = _data()
    for seed in (0, 1, 2):
        model = _net(seed)
        scores = model(X).detach().numpy()
        want = float((scores.argmax(axis=1) == y.numpy()).mean())
        got = accuracy(model, X, y)
        if isinstance(got, Tensor):
            if got.requires_grad:
                return Diagnosis("accuracy returned a tensor that requires grad; compute it under torch.no_grad() "
                                 "and return .item().",
                                 "accuracy返回了需要求导的张量；请在torch.no_grad()下计算，并返回.item()。")
            return compare(got, want, want="number")
        if isinstance(got, (int, float, np.floating)) and not isinstance(got, bool) and want > 0:
            if np.isclose(got, want * 100):
                return Diagnosis("that is a percentage; return a fraction between 0 and 1.",
                                 "这是百分数；请返回0到1之间的比例。")
            if np.isclose(got, want * len(y)):
                return Diagnosis("that is the number of right points; divide by the number of points.",
                                 "这是判对的点数；还要除以点的总数。")
            if np.isclose(got, 1 - want):
                return Diagnosis("that is the share of wrong points.", "这是判错的点所占的比例。")
        bad = compare(got, want, want="number", atol=1e-12)
        if bad:
            return bad
    return True
