"""Self-checks of lesson 14 (from autogradviz to real PyTorch). autogradviz never imports torch: the expected
answers are computed with autogradviz itself, which the lesson shows to give the same graphs."""
from .. import ones, tensor
from . import Diagnosis, _read, compare, exercise
from ._util import walk


@exercise("14.1",
          hint_en="the stepper has one frame per node that backward ran, plus one start frame before any node "
                  "ran. Build the loss with real PyTorch, make a stepper of it, and look at its frames.",
          hint_zh="单步执行器为反向传播运行的每个节点各准备一帧，另外还有一个任何节点都还没运行的起始帧。"
                  "用真正的PyTorch搭出loss，为它建一个单步执行器，再看看它的帧。",
          hint2_en="len() of the stepper's frames minus the start frame is the answer, an int. By hand: every "
                   "node of the backward graph runs, and a leaf that requires grad has a node too.",
          hint2_zh="单步执行器帧数的len()减去起始帧就是答案，一个整数。手算：反向图里的每个节点都会运行，"
                   "需要求导的叶子张量也有自己的节点。")
def _ex14_1(answer):
    x = ones(3)
    w = tensor(2.0, requires_grad=True)
    n = len(walk((x * w).sum().grad_fn))
    num = _read.read_number(answer)
    if num is not None and num[0] == "int":
        if num[1] == n + 1:
            return Diagnosis("that counts the start frame too, which is not a node.",
                             "这把起始帧也算进去了，而起始帧不是节点。")
        if num[1] == n - 1:
            return Diagnosis("one node is missing from your count: a leaf that requires grad has its "
                             "AccumulateGrad node, and it runs too.",
                             "你少数了一个节点：需要求导的叶子张量有自己的AccumulateGrad节点，它也会运行。")
    if _read.read_str(answer) is not None:
        return Diagnosis("that is a string; the exercise asks for the count as an int.",
                         "这是字符串；题目要的是整数形式的个数。")
    return compare(answer, n, want="count") or True


def _failed_op():
    """(short name, node name, message) of the op that fails in the lesson's trace: the node a 2-D ``@`` records
    when the shapes fit, named as the trace names a failed op (viz's FailedOp.op), and the error when they don't."""
    from ..viz.torch_trace import FailedOp
    node = (ones(2, 3) @ ones(3, 5, requires_grad=True)).grad_fn.name()
    try:
        (ones(2, 3) * 2) @ ones(4, 5, requires_grad=True)
        message = None
    except RuntimeError as err:
        message = str(err)
    return FailedOp(0, node, (), message, "RuntimeError").op, node, message


@exercise("14.2",
          hint_en="every entry of tr.failed describes one call that raised. Look at the attributes such an entry "
                  "has (dir() lists them).",
          hint_zh="tr.failed的每一项描述一次抛出错误的调用。看看这样的一项有哪些属性（dir()会列出它们）。",
          hint2_en="an entry has .op (the op's short name, a string), .name (its node's name) and .error (the "
                   "message). The exercise asks for the first of these, for the only failed call.",
          hint2_zh="每一项都有.op（操作的简短名字，一个字符串）、.name（它的节点名）和.error（错误信息）。"
                   "题目要的是唯一那次失败调用的第一个属性。")
def _ex14_2(answer):
    op, node, message = _failed_op()
    s = _read.read_str(answer)
    if s is None:
        if _read.kind_of(answer) == "other" and type(answer).__name__ in ("FailedOp", "FailedCall", "Failed"):
            return Diagnosis("that is the whole record of the failed call; the exercise asks for its short name, "
                             "a string.",
                             "这是失败调用的整条记录；题目要的是它的简短名字，一个字符串。")
        return Diagnosis("the answer should be a string, the short name of the failed op.",
                         "答案应当是一个字符串，即出错操作的简短名字。")
    if s == op:
        return True
    if s == node or s.endswith("Backward0"):
        return Diagnosis("that is the node's name; the op's short name is .op.",
                         "这是节点名；操作的简短名字是.op。")
    if s == message:
        return Diagnosis("that is the error message; the exercise asks for the op's short name.",
                         "这是错误信息；题目要的是操作的简短名字。")
    if s in ("matmul", "@", "__matmul__"):
        return Diagnosis("that is the Python operator's name; the trace records the op the library ran for it "
                         "(read .op).",
                         "这是Python运算符的名字；trace记录的是库为它实际运行的操作（读取.op）。")
    return Diagnosis("that is not the short name of the failed op: read it from tr.failed.",
                     "这不是出错操作的简短名字：从tr.failed里读取。")
