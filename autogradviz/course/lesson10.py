"""Self-checks for lesson 10 (training a network)."""
import numpy as np

from . import Diagnosis, _read, compare, exercise, run_learner


def _data(lib, n=40, seed=1):
    rng = np.random.default_rng(seed)
    pts = rng.normal(0, 1, (n, 2))
    labels = (pts[:, 0] * pts[:, 1] > 0).astype(np.int64)
    return lib.tensor(pts.tolist(), dtype=lib.float64), lib.tensor(labels.tolist())


def _net(lib, seed):
    lib.manual_seed(seed)
    return lib.nn.Sequential(lib.nn.Linear(2, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2)).double()


def _params(m):
    return [_read.read_tensor(p).values() for p in m.parameters()]


class _Watch:
    """Records, in order, the calls of an optimizer's zero_grad/step and the backward passes that reach a model's
    parameters (through tensor hooks on the check's own model and optimizer)."""

    def __init__(self, model, opt):
        self.events = []
        for name in ("zero_grad", "step"):
            real = getattr(opt, name)
            setattr(opt, name, self._wrap(name, real))
        first = next(iter(model.parameters()))
        first.register_hook(self._grad_hook)

    def _wrap(self, name, real):
        def call(*a, **k):
            self.events.append(name)
            return real(*a, **k)
        return call

    def _grad_hook(self, g):
        self.events.append("backward")


def _order_problem(calls):
    """A Diagnosis for a train_step whose zero_grad/backward/step calls come in a wrong order, else None.
    ``calls`` holds the events of each call of train_step."""
    for events in calls:
        if "step" not in events:
            return Diagnosis("the parameters did not change: opt.step() is never called.",
                             "参数没有变化：从来没有调用opt.step()。")
        if "backward" not in events:
            return Diagnosis("no backward pass reached the parameters: loss.backward() is never called.",
                             "没有反向传播到达参数：从来没有调用loss.backward()。")
        step = len(events) - 1 - events[::-1].index("step")
        if "backward" not in events[:step]:
            return Diagnosis("opt.step() runs before loss.backward(): when it runs, there are no new gradients "
                             "yet.",
                             "opt.step()在loss.backward()之前运行：它运行时还没有新的梯度。")
        bwd = step - 1 - events[:step][::-1].index("backward")
        if "zero_grad" in events[bwd:step]:
            return Diagnosis("opt.zero_grad() runs between loss.backward() and opt.step(): it wipes the "
                             "gradients that step() needs.",
                             "opt.zero_grad()在loss.backward()和opt.step()之间运行：它清掉了step()需要的梯度。")
    return None


@exercise("10.1",
          hint_en="a training step has four parts: clear the old gradients, compute the loss, backpropagate, "
                  "update the parameters. The order matters. Which optimizer method does the first, and which "
                  "the last?",
          hint_zh="一个训练步有四部分：清空旧梯度、计算损失、反向传播、更新参数。顺序很重要。"
                  "优化器的哪个方法做第一件事，哪个方法做最后一件？",
          hint2_en="the optimizer's zero_grad() comes first and its step() last; in between, the loss of "
                   "model(X) against y with loss_fn, and backward() on that loss. Return the loss as a Python "
                   "float with .item().",
          hint2_zh="先调用优化器的zero_grad()，最后调用它的step()；中间用loss_fn算出model(X)相对y的损失，"
                   "再对这个损失调用backward()。用.item()把损失作为Python浮点数返回。")
def _check_1001(train_step):
    if not _read.is_function(train_step):
        k_en, k_zh = _read.kind_words(train_step)
        return Diagnosis(f"the answer should be your function itself (answer = train_step), not {k_en}.",
                         f"答案应当是你的函数本身（answer = train_step），而不是{k_zh}。")
    lib = _read.function_library(train_step)
    X, y = _data(lib)
    loss_fn = lib.nn.CrossEntropyLoss()
    ref = _net(lib, 5)
    ref_opt = lib.optim.SGD(ref.parameters(), lr=0.5)
    want = []
    for _ in range(3):
        ref_opt.zero_grad()
        loss = loss_fn(ref(X), y)
        loss.backward()
        ref_opt.step()
        want.append(loss.item())
    mine = _net(lib, 5)
    start = _params(mine)
    opt = lib.optim.SGD(mine.parameters(), lr=0.5)
    watch = _Watch(mine, opt)
    got, calls = [], []
    for _ in range(3):
        watch.events = []
        out = run_learner(train_step, mine, opt, X, y)
        calls.append(watch.events)
        num = _read.read_number(out)
        if num is None or num[0] != "float":
            if out is None:
                return Diagnosis("train_step returned None; it should return the loss as a float.",
                                 "train_step返回了None；它应当以浮点数返回损失。")
            if _read.read_tensor(out) is not None:
                return Diagnosis("train_step returned a tensor; return the loss as a Python float (loss.item()).",
                                 "train_step返回了张量；请以Python浮点数返回损失（loss.item()）。")
            k_en, k_zh = _read.kind_words(out)
            return Diagnosis(f"train_step returned {k_en}; it should return the loss as a float.",
                             f"train_step返回了{k_zh}；它应当以浮点数返回损失。")
        got.append(num[1])
    if all(np.array_equal(a, b) for a, b in zip(start, _params(mine))):
        return _order_problem(calls) or Diagnosis("the parameters did not change.", "参数没有变化。")
    if not np.isclose(got[0], want[0], rtol=1e-9):
        return Diagnosis("the first step's loss is not the loss of the model before the step.",
                         "第一步返回的损失不是这一步更新之前模型的损失。")
    if not np.allclose(got, want, rtol=1e-9):
        return _order_problem(calls) or Diagnosis(
            "the first step is right, the next ones are not: are the gradients cleared before each backward()?",
            "第一步对了，后面几步不对：每次backward()之前清空梯度了吗？")
    return True


def _dead(model, X):
    w = _read.read_tensor(model.layer1.weight).values()
    b = _read.read_tensor(model.layer1.bias).values()
    pre = _read.read_tensor(X).values() @ w.T + b                # from first principles, in numpy
    return int((np.maximum(pre, 0) == 0).all(axis=0).sum()), pre


@exercise("10.2",
          hint_en="a unit is one column of relu(layer1(X)): one value per point. It is dead if its whole column "
                  "is 0. Compute the hidden activations without a graph and look at them column by column.",
          hint_zh="一个单元就是relu(layer1(X))的一列：每个点一个值。如果整列都是0，这个单元就死了。"
                  "在不记录计算图的情况下算出隐藏层的激活值，然后逐列查看。",
          hint2_en="a column is all 0 exactly when its largest value is 0: take the maximum over the points "
                   "(dim 0, .values), compare it with 0, and count the True entries. Return an int.",
          hint2_zh="一列全是0，恰好就是它的最大值为0：对所有点取最大值（dim 0，取.values），和0比较，"
                   "再数出True的个数。返回一个整数。")
def _check_1002(answer, probe, X):
    dead, pre = _dead(probe, X)
    num = _read.read_number(answer)
    if num is not None and num[0] == "int":
        if num[1] == pre.shape[1] - dead and num[1] != dead:
            return Diagnosis("that is the number of units that are still alive.", "这是仍然活着的单元数。")
        if num[1] == int((pre <= 0).sum()) and num[1] != dead:
            return Diagnosis("that counts zero outputs (point by unit), not units that are zero for every point.",
                             "这数的是输出为0的次数（点×单元），而不是对每个点都为0的单元。")
    return compare(answer, dead, want="count") or True


@exercise("10.3",
          hint_en="the predicted class of a point is the index of its larger score. Look up the tensor method "
                  "that gives the index of the largest value along a dimension; and the context manager that "
                  "records no graph.",
          hint_zh="一个点的预测类别就是它较大那个分数的下标。查一查沿某一维给出最大值下标的张量方法，"
                  "以及不记录计算图的上下文管理器。",
          hint2_en="inside torch.no_grad(), take argmax over dim 1 of model(X); comparing it with y gives True "
                   "per right point. The mean of those, as a float between 0 and 1, is the accuracy; .item() "
                   "makes it a Python float.",
          hint2_zh="在torch.no_grad()里，对model(X)沿第1维取argmax；把它和y比较，判对的点得到True。"
                   "这些值的平均（0到1之间的浮点数）就是准确率；用.item()把它变成Python浮点数。")
def _check_1003(accuracy):
    if not _read.is_function(accuracy):
        k_en, k_zh = _read.kind_words(accuracy)
        return Diagnosis(f"the answer should be your function itself (answer = accuracy), not {k_en}.",
                         f"答案应当是你的函数本身（answer = accuracy），而不是{k_zh}。")
    lib = _read.function_library(accuracy)
    X, y = _data(lib)
    labels = _read.read_tensor(y).values()
    for seed in (0, 1, 2):
        model = _net(lib, seed)
        with lib.no_grad():
            scores = _read.read_tensor(model(X)).values()
        want = float((scores.argmax(axis=1) == labels).mean())
        graphs = []
        model.register_forward_hook(lambda m, args, out, graphs=graphs: graphs.append(_read.read_tensor(out).grad_fn is not None))
        got = run_learner(accuracy, model, X, y)
        facts = _read.read_tensor(got)
        if facts is not None:
            if facts.requires_grad:
                return Diagnosis("accuracy returned a tensor that requires grad; compute it under torch.no_grad() "
                                 "and return .item().",
                                 "accuracy返回了需要求导的张量；请在torch.no_grad()下计算，并返回.item()。")
            return compare(got, want, want="number")
        num = _read.read_number(got)
        if num is None or num[0] == "bool":
            k_en, k_zh = _read.kind_words(got)
            return Diagnosis(f"accuracy returned {k_en}; it should return the accuracy as a float.",
                             f"accuracy返回了{k_zh}；它应当以浮点数返回准确率。")
        if num[0] in ("int", "float") and want > 0:
            v = num[1]
            if np.isclose(v, want * 100):
                return Diagnosis("that is a percentage; return a fraction between 0 and 1.",
                                 "这是百分数；请返回0到1之间的比例。")
            if np.isclose(v, want * len(labels)):
                return Diagnosis("that is the number of right points; divide by the number of points.",
                                 "这是判对的点数；还要除以点的总数。")
            if np.isclose(v, 1 - want):
                return Diagnosis("that is the share of wrong points.", "这是判错的点所占的比例。")
        bad = compare(got, want, want="number", atol=1e-12)
        if bad:
            return bad
        if any(graphs):
            return Diagnosis("the value is right, but model(X) recorded a graph: compute the scores inside "
                             "torch.no_grad().",
                             "数值对了，但model(X)记录了计算图：请在torch.no_grad()里计算分数。")
    return True
