"""Self-checks of lesson 01 (tensors)."""
import numpy as np

from .. import Tensor
from . import Diagnosis, _read, compare, exercise

_COPY = Diagnosis("the shape and values are right, but your tensor is a copy: it does not share memory with the "
                  "original. Use a view.",
                  "形状和数值都对，但你的张量是一份拷贝，没有和原张量共享内存。请用视图（view）。")


def _shares_memory(a, b):
    """True if the tensors' memories overlap (read by the check, nothing written)."""
    fa, fb = _read.read_tensor(a), _read.read_tensor(b)
    if fa is None or fb is None or fa.numel == 0:
        return False
    return bool(np.shares_memory(fa.array(), fb.array()))


def _tensor_arg(x, name):
    if _read.read_tensor(x) is None:
        k_en, k_zh = _read.kind_words(x)
        return Diagnosis(f"pass the lesson's {name} as the second argument of check; it is {k_en} here.",
                         f"请把课文里的{name}作为check的第二个参数传入；这里它是{k_zh}。")
    return None


@exercise("01.1",
          hint_en="the legacy constructor takes the data as ONE argument. How do you write a 2x3 matrix as a "
                  "single Python value?",
          hint_zh="旧式构造函数把数据当作一个参数接收。怎样用一个Python值写出一个2x3的矩阵？",
          hint2_en="a nested list: one inner list per row, two rows of three numbers. torch.Tensor (capital T) "
                   "always makes float32; torch.tensor (small t) keeps integers as int64.",
          hint2_zh="用嵌套列表：每行一个内层列表，两行，每行三个数。torch.Tensor（大写T）总是得到float32，而"
                   "torch.tensor（小写t）会把整数保留为int64。")
def _ex01_1(answer):
    expected = np.arange(1, 7, dtype=np.float64).reshape(2, 3)
    facts = _read.read_tensor(answer)
    if facts is not None and facts.shape in ((6,), (1, 6)) and np.allclose(facts.values().reshape(-1),
                                                                             expected.reshape(-1)):
        return Diagnosis("the six numbers are all in one row: the matrix has two rows, one inner list each.",
                         "六个数都排在了一行里：这个矩阵有两行，每行一个内层列表。")
    if facts is not None and facts.shape == (3, 2) and np.allclose(facts.values(), expected.T):
        return Diagnosis("rows and columns are swapped: the first row is 1, 2, 3.",
                         "行和列弄反了：第一行是1, 2, 3。")
    return compare(answer, expected, dtype="float32") or True


@exercise("01.2",
          hint_en="there are three ways to change a shape: view, reshape and clone. Which one never copies?",
          hint_zh="改变形状有三种写法：view、reshape和clone。哪一种从不复制数据？",
          hint2_en="a view only changes how the same 12 numbers are read: pass the new shape, 3 rows and 4 "
                   "columns (-1 lets PyTorch work out one of them). reshape may copy, clone always does.",
          hint2_zh="视图只改变同样那12个数的读法：传入新形状，3行4列（写-1可以让PyTorch算出其中一个）。"
                   "reshape可能复制，clone一定复制。")
def _ex01_2(answer, base):
    bad = _tensor_arg(base, "base")
    if bad:
        return bad
    bad = compare(answer, _read.read_tensor(base).values().reshape(3, 4))
    if bad:
        return bad
    return _shares_memory(answer, base) or _COPY


@exercise("01.3",
          hint_en="unsqueeze(dim) adds one dimension of size 1 at position dim. How many do you need, and where?",
          hint_zh="unsqueeze(dim)在第dim个位置加一个大小为1的维度。你需要加几个、加在哪里？",
          hint2_en="two: one in front (dim 0) and one at the end (dim -1, which counts from the back). Check "
                   "the shape after each step.",
          hint2_zh="两个：一个在最前面（第0维），一个在最后面（第-1维，从后往前数）。每一步之后都看看形状。")
def _ex01_3(answer, v3):
    bad = _tensor_arg(v3, "v3")
    if bad:
        return bad
    bad = compare(answer, _read.read_tensor(v3).values().reshape(1, -1, 1))
    if bad:
        return bad
    return _shares_memory(answer, v3) or _COPY


def _storage_values(facts):
    """All the numbers in the memory a tensor's array is a window on (autogradviz: the root numpy array)."""
    arr = facts.array()
    while type(arr.base) is np.ndarray:
        arr = arr.base
    return np.array(arr, dtype=np.float64).reshape(-1)


def _torch_storage_values(t):
    import torch
    with torch._C.DisableTorchFunctionSubclass():
        storage = torch._C.TensorBase.untyped_storage(t)
        flat = torch.empty(0, dtype=torch._C.TensorBase.dtype.__get__(t))
        flat.set_(storage)
        return np.array(flat.numpy(), dtype=np.float64).reshape(-1)


@exercise("01.4",
          hint_en="a method whose name ends in an underscore changes the tensor itself. Which one sets a new "
                  "shape without keeping the number of elements?",
          hint_zh="名字以下划线结尾的方法会直接修改张量本身。哪一个方法可以设定新形状、而不要求元素个数不变？",
          hint2_en="resize_ takes the new sizes, here 1 row of 3. Call it on t (don't assign a slice to t: "
                   "that makes a new tensor), then hand t itself to the check.",
          hint2_zh="resize_接收新的各维大小，这里是1行3列。对t调用它（不要把切片赋给t：那会得到一个新张量），"
                   "再把t本身交给check。")
def _ex01_4(answer, t):
    first_row = Tensor([[1, 2, 3], [4, 5, 6]])[:1].numpy().astype(np.float64)
    ft = _read.read_tensor(t)
    if ft is None:
        return _tensor_arg(t, "t")
    if ft.shape == (2, 3) and answer is t:
        return Diagnosis("t still has the shape (2, 3): nothing changed t in place.",
                         "t的形状还是(2, 3)：没有什么操作原地修改了t。")
    bad = compare(answer, first_row)
    if bad:
        return bad
    if answer is not t:
        return Diagnosis("your answer is a new tensor, and t is unchanged; the exercise asks to change t itself "
                         "(an in-place method, whose name ends in _) and answer = t.",
                         "你的答案是一个新张量，t本身没变；题目要求直接修改t（原地操作，方法名以_结尾），"
                         "并写answer = t。")
    if ft.base is not None:
        return Diagnosis("t is now a slice (a view) of the old t: the name t was given a new tensor, and the old "
                         "one was not resized.",
                         "现在的t是旧t的一个切片（视图）：名字t换成了一个新张量，旧张量并没有被resize。")
    every = _torch_storage_values(t) if ft.lib == "torch" else _storage_values(ft)
    kept = every.size >= 6 and np.array_equal(every[:6], np.arange(1, 7, dtype=np.float64))
    return kept or Diagnosis("t has the right shape and values, but not through resize_: its memory is not the "
                             "original six numbers any more.",
                             "t的形状和数值都对，但不是用resize_得到的：它的内存已经不是原来那六个数了。")
