"""Self-checks of lesson 10 (from autogradviz to real PyTorch). autogradviz never imports torch: the expected
answers are computed with autogradviz itself, which the lesson shows to give the same graphs."""
from .. import ones, tensor
from . import exercise


@exercise("10.1",
          hint_en="count the nodes backward runs for loss = (x * w).sum() with a leaf w: the stepper's frames "
                  "minus the start frame (len(stepper.frames) - 1).",
          hint_zh="数一数loss = (x * w).sum()（w是叶子张量）的反向传播运行了几个节点：单步回放器的帧数减去起始帧"
                  "（len(stepper.frames) - 1）。")
def _ex10_1(answer):
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
    return isinstance(answer, int) and not isinstance(answer, bool) and answer == n


@exercise("10.2",
          hint_en="tr.failed lists the calls that raised inside the trace; each has .op (its short name) and "
                  ".error (the message). answer = tr.failed[0].op",
          hint_zh="tr.failed列出在trace里抛出错误的调用；每一个都有.op（简短的操作名）和.error（错误信息）。"
                  "answer = tr.failed[0].op")
def _ex10_2(answer):
    return answer == "mm"
