"""Self-checks for the lessons' exercises.

Each lesson's checks live in ``autogradviz/course/lessonNN.py`` and register themselves with ``@exercise``.
A notebook cell calls ``check("03.1", answer)``. It prints, in the lesson's language (the visualizer's language
setting):

- ``✓`` when the answer is right;
- "not yet, no answer" when the answer is still ``None`` (nothing is given away);
- otherwise a diagnosis of *this* answer: first its kind (a number, a count, a tensor, a function, a list, a
  string), then its value (shape, values, a missing factor, a step in the wrong order, ...);
- the learner's own traceback when their code (a function or class they wrote) crashes while being checked;
- "the check itself failed" when the check has a bug: never blamed on the answer.

Hints are asked for, never shown by themselves: ``check(..., hint=1)`` or ``hint("03.1")`` prints a first hint (the
idea, the API to look up, a smaller case), ``check(..., hint=2)`` or ``hint("03.1", level=2)`` a stronger one.
Neither is the solution's code, and running the same wrong answer again shows nothing more.

A check function returns ``True`` (right), ``False`` (wrong, no particular diagnosis) or a :class:`Diagnosis`
(wrong, and why). It computes what the right answer is (with autogradviz itself or from first principles), never
compares with a value pasted from somewhere, and reads the answer's facts with its own code (``_read``): it never
calls the answer's ``__eq__``, ``__ne__``, ``__contains__``, ``__bool__`` or ``__repr__``. Answers made with real
PyTorch (a lesson run with ``import torch``) are read the same way and get the same feedback. ``verify`` returns the
verdict as a bool (the tests use it), ``diagnose`` returns the verdict and the message without printing.
"""
import importlib
import inspect
import math
import os
import pkgutil
import sysconfig
import traceback

import numpy as np

from . import _read

__all__ = ["exercise", "check", "verify", "diagnose", "hint", "Diagnosis", "compare", "run_learner"]

_REGISTRY = {}

_TEXT = {
    "ok": {"en": "✓ Correct!", "zh": "✓ 正确！"},
    "no": {"en": "✗ Not yet: ", "zh": "✗ 还不对。"},
    "empty": {"en": "✗ Not yet: there is no answer yet. Write your code in the cell above, run it, then run "
                    "this cell again.",
              "zh": "✗ 还没有答案。先在上面的单元格里写好代码并运行，再运行这个单元格。"},
    "wrong": {"en": "this is not the expected answer.", "zh": "这不是预期的答案。"},
    "more": {"en": "(Stuck? Add hint=1 to the check(...) call for a hint, hint=2 for a stronger one.)",
             "zh": "（卡住了？在check(...)里加上hint=1可以看提示，加上hint=2可以看更具体的提示。）"},
    "hint": {"en": "Hint: ", "zh": "提示："},
    "hint2": {"en": "Stronger hint: ", "zh": "更具体的提示："},
    "crash": {"en": "✗ Your code raised an error while it was being checked:",
              "zh": "✗ 检查时，你的代码出错了："},
    "internal": {"en": "✗ The check itself failed ({err}). This is a bug in the course, not in your answer; "
                       "please report it.",
                 "zh": "✗ 检查程序自己出错了（{err}）。这是课程的问题，不是你的答案的问题，请报告它。"},
}


class Diagnosis:
    """What is wrong with an answer, in both languages."""
    __slots__ = ("en", "zh")

    def __init__(self, en, zh):
        self.en, self.zh = en, zh

    def __repr__(self):
        return f"Diagnosis({self.en!r})"

    def text(self, lang):
        return self.zh if lang == "zh" else self.en


def exercise(ex_id, hint_en, hint_zh, hint2_en=None, hint2_zh=None):
    """Register ``fn(*answers) -> True | False | Diagnosis`` as the check of exercise ``ex_id``, with its first
    hint (``hint_en``/``hint_zh``) and an optional stronger second one (``hint2_en``/``hint2_zh``)."""
    def deco(fn):
        hints = {1: {"en": hint_en, "zh": hint_zh}}
        if hint2_en is not None:
            hints[2] = {"en": hint2_en, "zh": hint2_zh}
        _REGISTRY[ex_id] = (fn, hints)
        return fn
    return deco


def _load():
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if m.name.startswith("lesson"):
            importlib.import_module(f"{__name__}.{m.name}")


def _lang(lang):
    if type(lang) is str and lang in ("en", "zh"):
        return lang
    try:
        from ..viz.i18n import get_lang
        return get_lang()
    except ImportError:  # pragma: no cover
        return "en"


# ------------------------------------------------------------------------------------------------ the learner's code
class LearnerError(Exception):
    """The learner's own code raised while the check ran it (``err`` is what it raised)."""

    def __init__(self, err):
        super().__init__(err)
        self.err = err


def run_learner(fn, *args, **kwargs):
    """Call learner-supplied code (a function, a hook, a Function's apply, a backward that runs their hooks);
    whatever it raises comes back as :class:`LearnerError`, shown to the learner as their own traceback, a
    ``sys.exit()`` in it too (a check never raises). Only KeyboardInterrupt goes through: the learner stopped the
    kernel."""
    try:
        return fn(*args, **kwargs)
    except (Exception, SystemExit) as err:
        raise LearnerError(err) from err


# ------------------------------------------------------------------------------------------------ diagnoses
def kind_is(got, what, expected_en, expected_zh):
    """"{what} is <kind>; the exercise asks for <expected>." as a Diagnosis."""
    what_en, what_zh = what
    k_en, k_zh = _read.kind_words(got)
    return Diagnosis(f"{what_en} is {k_en}; the exercise asks for {expected_en}.",
                     f"{what_zh}是{k_zh}；题目要的是{expected_zh}。")


_MAX_NESTING = 32          # numpy's own limit on dimensions is 64; a deeper (or self-containing) list is no array


def plain_array(x, limit=10_000, _depth=0):
    """A float64 array from exact numbers, exact (nested) lists and tuples, or an exact numpy array; else None
    (also for lists nested deeper than any array, or containing themselves)."""
    n = _read.read_number(x)
    if n is not None:
        if n[0] == "bool":
            return None
        try:
            return np.asarray(float(n[1]))
        except OverflowError:
            return np.asarray(math.inf if n[1] > 0 else -math.inf)
    if type(x) is np.ndarray:
        if x.size > limit or x.dtype.kind not in "biuf":
            return None
        return np.array(x, dtype=np.float64, copy=True)
    items = _read.read_list(x)
    if items is None or len(items) > limit or _depth >= _MAX_NESTING:
        return None
    rows = [plain_array(v, limit, _depth + 1) for v in items]
    if any(r is None for r in rows) or len({r.shape for r in rows}) > 1:
        return None
    return np.stack(rows) if rows else np.zeros(0)


def _factor(got, want):
    """The constant ratio got / want if there is one (and it is not 1), for arrays of two or more values."""
    got, want = got.reshape(-1), want.reshape(-1)
    if got.size < 2 or got.shape != want.shape or not np.all(np.abs(want) > 1e-12):
        return None
    r = got / want
    if np.allclose(r, r[0], rtol=1e-4, atol=1e-6) and not np.isclose(r[0], 1.0, rtol=1e-4) and r[0] != 0:
        return float(r[0])
    return None


def _off_by(r, what):
    what_en, what_zh = what
    if np.isclose(r, -1.0):
        return Diagnosis(f"the values of {what_en} have the right size but the wrong sign.",
                         f"{what_zh}的数值大小对了，但符号反了。")
    return Diagnosis(f"every value of {what_en} is {r:.3g} times the right one: a factor is missing or extra.",
                     f"{what_zh}的每个值都是正确值的{r:.3g}倍，多乘或少乘了一个因子。")


def _shape(s):
    return "(" + ", ".join(str(v) for v in s) + ("," if len(s) == 1 else "") + ")"


def compare(got, expected, *, want="tensor", atol=1e-5, rtol=1e-5, detached=True, what=None, dtype=None):
    """None if ``got`` matches ``expected``, else a :class:`Diagnosis` saying how it differs, kind first.

    want: "tensor" (a tensor of either library with expected's shape and values; with ``detached``, one that is
    not part of a graph; with ``dtype``, of that dtype name), "number" (an int or float) or "int"/"count" (a count:
    an int, numpy's integers included). ``expected`` is a number or an array, never the answer's own object."""
    what = what or ("your answer", "你的答案")
    what_en, what_zh = what
    exp = np.asarray(expected, dtype=np.float64)
    facts = _read.read_tensor(got)
    if want == "tensor":
        if facts is None:
            arr = plain_array(got)
            if arr is not None and arr.shape == exp.shape and np.allclose(arr, exp, atol=atol, rtol=rtol):
                k_en, k_zh = _read.kind_words(got)
                return Diagnosis(f"the value is right, but {what_en} is {k_en}, not a tensor. Store the tensor "
                                 "itself.",
                                 f"数值对了，但{what_zh}是{k_zh}，不是张量。请直接存放那个张量。")
            items = _read.read_list(got)
            if items and all(_read.read_tensor(v) is not None for v in items):
                k_en, k_zh = _read.kind_words(got)
                return Diagnosis(f"{what_en} is {k_en} of tensors; the exercise asks for one tensor (torch.stack "
                                 "makes one from several).",
                                 f"{what_zh}是由张量组成的{k_zh}；题目要的是一个张量（torch.stack可以把几个张量"
                                 "拼成一个）。")
            return kind_is(got, what, "a tensor", "张量")
        if facts.shape != exp.shape:
            return Diagnosis(f"{what_en} has the shape {_shape(facts.shape)}, which is not the shape of the right "
                             "answer.",
                             f"{what_zh}的形状是{_shape(facts.shape)}，和正确答案的形状不一样。")
        arr = facts.values()
        if detached and facts.requires_grad and facts.grad_fn is None and not np.allclose(arr, exp, atol=atol,
                                                                                          rtol=rtol):
            return Diagnosis(f"{what_en} requires grad and has no grad_fn: it is a leaf tensor you created, not a "
                             "gradient.",
                             f"{what_zh}需要求导、也没有grad_fn：它是你创建的叶子张量，不是梯度。")
        if detached and facts.grad_fn is not None and not np.allclose(arr, exp, atol=atol, rtol=rtol):
            name = facts.grad_fn_name
            return Diagnosis(f"{what_en} was made by an operation (its grad_fn is {name}): it is a result of the "
                             "computation, not a gradient.",
                             f"{what_zh}是由运算得到的（它的grad_fn是{name}）：它是计算的结果，不是梯度。")
        if np.isnan(arr).any() and not np.isnan(exp).any():
            return Diagnosis(f"{what_en} contains nan (not a number): somewhere a value was undefined, such as 0/0.",
                             f"{what_zh}里有nan（不是数）：某处算出了没有定义的值，比如0/0。")
        if np.allclose(arr, exp, atol=atol, rtol=rtol):
            if dtype is not None and facts.dtype != dtype:
                return Diagnosis(f"the values are right, but the dtype of {what_en} is torch.{facts.dtype}; it "
                                 f"should be torch.{dtype}.",
                                 f"数值对了，但{what_zh}的dtype是torch.{facts.dtype}，应当是torch.{dtype}。")
            if detached and (facts.requires_grad or facts.grad_fn is not None):
                return Diagnosis(f"the values are right, but {what_en} is still part of a graph (it requires "
                                 "grad). Store a gradient, which does not.",
                                 f"数值对了，但{what_zh}仍连在计算图上（它需要求导）。梯度本身是不需要求导的。")
            return None
        r = _factor(arr, exp)
        if r is not None:
            return _off_by(r, what)
        return Diagnosis(f"the values of {what_en} are not right yet.", f"{what_zh}的数值还不对。")
    if want not in ("number", "int", "count"):  # pragma: no cover - a check's own mistake
        raise ValueError(want)
    count = want != "number"
    noun_en, noun_zh = ("a count (an int)", "个数（整数int）") if count else ("a plain Python number", "普通的Python数")
    if facts is not None:
        vals = facts.values() if facts.numel == 1 else None
        if vals is not None and np.allclose(vals.reshape(-1), exp.reshape(-1), atol=atol, rtol=rtol):
            how = "int(...) or .item()" if count else ".item()"
            return Diagnosis(f"the value is right, but {what_en} is a tensor; the exercise asks for {noun_en} "
                             f"(use {how}).",
                             f"数值对了，但{what_zh}是张量；题目要的是{noun_zh}（用{how}）。")
        return Diagnosis(f"{what_en} is a tensor; the exercise asks for {noun_en}.",
                         f"{what_zh}是张量；题目要的是{noun_zh}。")
    num = _read.read_number(got)
    if num is None or num[0] == "bool":
        return kind_is(got, what, noun_en, noun_zh)
    kind, v = num
    e = float(exp.reshape(()))
    if count and kind == "float":
        if math.isfinite(v) and v == int(v) and int(v) == e:
            return Diagnosis(f"the count is right, but {what_en} is a float; write it as an int.",
                             f"个数对了，但{what_zh}是浮点数；请写成整数（int）。")
        return Diagnosis(f"{what_en} is a float, and a count is a whole number (an int).",
                         f"{what_zh}是浮点数，而个数应当是整数（int）。")
    if kind == "float" and math.isnan(v):
        return Diagnosis(f"{what_en} is nan (not a number): somewhere a value was undefined, such as 0/0.",
                         f"{what_zh}是nan（不是数）：某处算出了没有定义的值，比如0/0。")
    if count:
        d = v - int(e)
        if d == 0:
            return None
        if abs(d) > 10 ** 6:
            return Diagnosis(f"{what_en} is far {'too large' if d > 0 else 'too small'} for this count.",
                             f"{what_zh}作为这个个数{'太大' if d > 0 else '太小'}了。")
        return Diagnosis(f"{what_en} counts too {'many' if d > 0 else 'few'}.",
                         f"{what_zh}数{'多' if d > 0 else '少'}了。")
    try:
        fv = float(v)
    except OverflowError:
        fv = math.inf if v > 0 else -math.inf
    if math.isinf(fv) and not math.isinf(e):
        return Diagnosis(f"{what_en} is far too large to be right.", f"{what_zh}太大了，不可能对。")
    if np.isclose(fv, e, atol=atol, rtol=rtol):
        return None
    return Diagnosis(f"{what_en} is not the right number yet.", f"{what_zh}这个数还不对。")


def _learner_frames(tb):
    """The frames of a traceback that are the learner's code, not this package's or an installed library's."""
    ours = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    libs = {os.path.abspath(p) for k, p in sysconfig.get_paths().items()
            if k in ("stdlib", "platstdlib", "purelib", "platlib")}
    out = []
    for fr in traceback.extract_tb(tb):
        f = fr.filename
        absf = os.path.abspath(f) if not f.startswith("<") else f
        if absf.startswith(ours) or any(absf.startswith(p) for p in libs):
            continue
        out.append(fr)
    return out


def _exception_line(err):
    """``TypeError: message`` of an exception, even one whose own ``__str__`` raises."""
    try:
        return "".join(traceback.format_exception_only(type(err), err)).rstrip("\n")
    except Exception:                                            # noqa: BLE001
        return type(err).__name__


def _is_unanswered(x):
    """None or ..., or an exact list, tuple or dict whose items are all None (read without the answer's code)."""
    if x is None or x is Ellipsis:
        return True
    items = _read.read_list(x)
    if items is None:
        d = _read.read_dict(x)
        items = list(d.values()) if d is not None else None
    return bool(items) and all(v is None for v in items)


def diagnose(ex_id, *answers, **kw):
    """(ok, kind, diagnosis or text) for ``answers`` to exercise ``ex_id``, without printing; it never raises
    for any answer.

    kind is "ok", "empty" (no answer yet), "wrong" (the diagnosis is a Diagnosis or None), "crash" (the learner's
    code raised while it was checked; the text is its traceback) or "internal" (the check itself failed; the
    text names the error)."""
    _load()
    try:
        fn, _ = _REGISTRY[ex_id]
        if answers and _is_unanswered(answers[0]):
            return False, "empty", None
        misfit = _arguments_misfit(ex_id, fn, answers, kw)
        if misfit is not None:
            return False, "wrong", misfit
        res = fn(*answers, **kw)
        if res is True:
            return True, "ok", None
        if type(res) is Diagnosis:
            return False, "wrong", res
        if res is False or res is None:
            return False, "wrong", None
        raise TypeError(f"the check returned {type(res).__name__}")
    except LearnerError as wrapped:
        err = wrapped.err
        frames = _learner_frames(err.__traceback__)
        head = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) if frames else ""
        return False, "crash", head + _exception_line(err) + "\n"
    except Exception as err:                                     # noqa: BLE001 - the check's own failure
        return False, "internal", _exception_line(err)


def _arguments_misfit(ex_id, fn, answers, kw):
    """A Diagnosis when ``check(ex_id, ...)`` was given more or fewer answers, or keywords, than the exercise takes
    (the learner's mistake, not the check's failure); else None."""
    sig = inspect.signature(fn)
    try:
        sig.bind(*answers, **kw)
        return None
    except TypeError:
        pass
    names = [p.name for p in sig.parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    want = ", ".join(names)
    en = (f'check("{ex_id}", ...) takes {len(names)} answer{"" if len(names) == 1 else "s"} ({want}); '
          f'it got {len(answers)}')
    zh = f'check("{ex_id}", ...)要{len(names)}个答案（{want}），收到的是{len(answers)}个'
    extra = [k for k in kw if k not in sig.parameters]
    if extra:
        en += " and the keyword " + ", ".join(extra)
        zh += "，另有关键字参数" + "、".join(extra)
    return Diagnosis(en + ".", zh + "。")


def verify(ex_id, *answers, **kw):
    """True if ``answers`` solve exercise ``ex_id``."""
    return diagnose(ex_id, *answers, **kw)[0]


def _hint_text(ex_id, lang, level):
    if type(ex_id) is not str or ex_id not in _REGISTRY:
        shown = ex_id if type(ex_id) is str else type(ex_id).__name__
        return _TEXT["internal"][lang].format(err=f"no exercise {shown!r}")
    hints = _REGISTRY[ex_id][1]
    asked = _read.read_number(level)
    level = 2 if asked is not None and asked[1] == 2 and 2 in hints else 1
    return _TEXT["hint2" if level == 2 else "hint"][lang] + hints[level][lang]


def hint(ex_id, lang=None, level=1):
    """Print the first hint of exercise ``ex_id``, or with ``level=2`` the stronger one."""
    _load()
    print(_hint_text(ex_id, _lang(lang), level))


def check(ex_id, *answers, lang=None, hint=False, **kw):
    """Print ✓, or what is wrong with this answer; ``hint=1`` (or True) adds the first hint, ``hint=2`` the
    stronger one. It never raises."""
    _load()
    lang = _lang(lang)
    ok, kind, info = diagnose(ex_id, *answers, **kw)
    asked = _read.read_number(hint)               # True/1 or 2, of any exact number type; anything else: none
    level = int(asked[1]) if asked is not None and asked[1] in (1, 2) else 0
    if ok:
        print(_TEXT["ok"][lang])
        return
    if kind == "empty":
        print(_TEXT["empty"][lang])
    elif kind == "crash":
        print(_TEXT["crash"][lang])
        print(info, end="" if info.endswith("\n") else "\n")
    elif kind == "internal":
        print(_TEXT["internal"][lang].format(err=info))
        return
    else:
        print(_TEXT["no"][lang] + (info.text(lang) if info is not None else _TEXT["wrong"][lang]))
    if level:
        print(_hint_text(ex_id, lang, level))
    elif kind != "empty":
        print(_TEXT["more"][lang])


def exercises():
    _load()
    return sorted(_REGISTRY)
