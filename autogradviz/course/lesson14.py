"""Self-checks of lesson 14 (from autogradviz to real PyTorch). autogradviz never imports torch: the expected
answers are computed with autogradviz itself, which the lesson shows to give the same graphs."""
from .. import ones, tensor
from . import Diagnosis, exercise


@exercise("14.1",
          hint_en="count the nodes backward runs for loss = (x * w).sum() with a leaf w: the stepper's frames "
                  "minus the start frame (len(stepper.frames) - 1).",
          hint_zh="数一数loss = (x * w).sum()（w是叶子张量）的反向传播运行了几个节点：单步回放器的帧数减去起始帧"
                  "（len(stepper.frames) - 1）。")
def _ex14_1(answer):
    x = ones(3)
    w = tensor(2.0, requires_grad=True)
    loss = (x * w).sum()
    n, seen, stack = 0, set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        n += 1
        stack.extend(f for f, _ in node.next_functions)
    if not isinstance(answer, int) or isinstance(answer, bool):
        return Diagnosis(f"the answer should be a whole number (an int), not {type(answer).__name__}.",
                         f"答案应当是一个整数（int），而不是{type(answer).__name__}。")
    if answer != n:
        return Diagnosis("count every node PyTorch ran: the sum, the multiplication and w's AccumulateGrad; the "
                         "start frame is not a node.",
                         "把PyTorch运行的每个节点都数上：求和、乘法和w的AccumulateGrad；起始帧不是节点。")
    return True


@exercise("14.2",
          hint_en="tr.failed lists the calls that raised inside the trace; each has .op (its short name) and "
                  ".error (the message). answer = tr.failed[0].op",
          hint_zh="tr.failed列出在trace里抛出错误的调用；每一个都有.op（简短的操作名）和.error（错误信息）。"
                  "answer = tr.failed[0].op")
def _ex14_2(answer):
    if answer == "mm":
        return True
    if isinstance(answer, str) and answer.endswith("Backward0"):
        return Diagnosis("that is the node's name; the op's short name is .op (MmBackward0 -> mm).",
                         "这是节点名；操作的简短名字是.op（MmBackward0 -> mm）。")
    return Diagnosis("x @ w with 2-D tensors is a matrix product, which PyTorch records as mm: read "
                     "tr.failed[0].op.",
                     "二维张量的x @ w是矩阵乘法，PyTorch把它记作mm：读取tr.failed[0].op。")
