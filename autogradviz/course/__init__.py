"""Self-checks for the lessons' exercises.

Each lesson's checks live in ``autogradviz/course/lessonNN.py`` and register themselves with ``@exercise``.
A notebook cell calls ``check("03.1", answer)``. It prints, in the lesson's language (the visualizer's language
setting):

- ``✓`` when the answer is right;
- "not yet, no answer" when the answer is still ``None`` (nothing is given away);
- otherwise a diagnosis of *this* answer (wrong type, wrong shape, off by a factor, ...). The fuller hint comes
  only when asked for: on the second wrong try of the same exercise, with ``check(..., hint=True)``, or with
  ``hint("03.1")``;
- the learner's own traceback when their code (a function or class they wrote) crashes while being checked.

A check function returns ``True`` (right), ``False`` (wrong, no particular diagnosis) or a :class:`Diagnosis`
(wrong, and why). A check computes what the right answer is (with autogradviz itself or from first principles);
it never compares with a value pasted from somewhere. ``verify`` returns the verdict as a bool (the tests use it),
``diagnose`` returns the verdict and the message without printing.
"""
import importlib
import os
import pkgutil
import sysconfig
import traceback

import numpy as np

__all__ = ["exercise", "check", "verify", "diagnose", "hint", "Diagnosis", "compare"]

_REGISTRY = {}
_ATTEMPTS = {}

_TEXT = {
    "ok": {"en": "✓ Correct!", "zh": "✓ 正确！"},
    "no": {"en": "✗ Not yet: ", "zh": "✗ 还不对："},
    "empty": {"en": "✗ Not yet: there is no answer yet. Write your code in the cell above, run it, then run "
                    "this cell again.",
              "zh": "✗ 还没有答案。先在上面的单元格里写好代码并运行，再运行这个单元格。"},
    "wrong": {"en": "this is not the expected answer.", "zh": "这不是预期的答案。"},
    "more": {"en": "(Run this cell again for a hint.)", "zh": "（再运行一次这个单元格可以看到提示。）"},
    "hint": {"en": "Hint: ", "zh": "提示："},
    "crash": {"en": "✗ Your code raised an error while it was being checked:",
              "zh": "✗ 检查时，你的代码出错了："},
    "unusable": {"en": "✗ Not yet: the check could not use your answer ({err}).",
                 "zh": "✗ 还不对：检查无法使用你的答案（{err}）。"},
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


def exercise(ex_id, hint_en, hint_zh):
    """Register ``fn(*answers) -> True | False | Diagnosis`` as the check of exercise ``ex_id``."""
    def deco(fn):
        _REGISTRY[ex_id] = (fn, {"en": hint_en, "zh": hint_zh})
        return fn
    return deco


def _load():
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if m.name.startswith("lesson"):
            importlib.import_module(f"{__name__}.{m.name}")


def _lang(lang):
    if lang is not None:
        return lang
    try:
        from ..viz.i18n import get_lang
        return get_lang()
    except ImportError:  # pragma: no cover
        return "en"


# ------------------------------------------------------------------------------------------------ diagnoses
def _typename(x):
    return type(x).__name__


def _is_unanswered(x):
    if x is None or x is Ellipsis:
        return True
    if isinstance(x, (list, tuple)) and x and all(v is None for v in x):
        return True
    if isinstance(x, dict) and x and all(v is None for v in x.values()):
        return True
    return False


def _as_array(x):
    from .._tensor import Tensor
    if isinstance(x, Tensor):
        return x.detach().numpy().astype(np.float64)
    return np.asarray(x, dtype=np.float64)


def _factor(got, want):
    """The constant ratio got / want if there is one (and it is not 1), else None."""
    got, want = np.asarray(got, np.float64).reshape(-1), np.asarray(want, np.float64).reshape(-1)
    if got.size == 0 or got.shape != want.shape or not np.all(np.abs(want) > 1e-12):
        return None
    r = got / want
    if np.allclose(r, r[0], rtol=1e-4, atol=1e-6) and not np.isclose(r[0], 1.0, rtol=1e-4) and r[0] != 0:
        return float(r[0])
    return None


def _off_by(r):
    if np.isclose(r, -1.0):
        return Diagnosis("the values have the right size but the wrong sign.",
                         "数值大小对了，但符号反了。")
    return Diagnosis(f"every value is {r:.3g} times the right one: a factor is missing or extra.",
                     f"每个值都是正确值的{r:.3g}倍：多乘或少乘了一个因子。")


def compare(got, expected, *, want="tensor", atol=1e-5, rtol=1e-5, detached=True, what=None):
    """None if ``got`` matches ``expected``, else a :class:`Diagnosis` saying how it differs.

    want: "tensor" (a Tensor with expected's shape and values), "number" (an int or float, or a one-element
    tensor's value is diagnosed as the wrong type), "int" (a count)."""
    from .._tensor import Tensor
    what_en, what_zh = what or ("your answer", "你的答案")
    if isinstance(got, bool):
        return Diagnosis(f"{what_en} is {got}, a bool; the exercise asks for a "
                         f"{'tensor' if want == 'tensor' else 'number'}.",
                         f"{what_zh}是布尔值{got}；题目要的是{'张量' if want == 'tensor' else '数'}。")
    exp = _as_array(expected)
    if want == "tensor":
        if not isinstance(got, Tensor):
            try:
                arr = np.asarray(got, dtype=np.float64)
                right_value = arr.shape == exp.shape and np.allclose(arr, exp, atol=atol, rtol=rtol)
            except (TypeError, ValueError):
                right_value = False
            if right_value:
                return Diagnosis(f"the value is right, but {what_en} is a {_typename(got)}, not a tensor. "
                                 "Store the tensor itself.",
                                 f"数值对了，但{what_zh}是{_typename(got)}，不是张量。请直接存放那个张量。")
            return Diagnosis(f"{what_en} is a {_typename(got)}; the exercise asks for a tensor.",
                             f"{what_zh}是{_typename(got)}；题目要的是张量。")
        if tuple(got.shape) != exp.shape:
            return Diagnosis(f"{what_en} has the shape {tuple(got.shape)}; the right answer has the shape "
                             f"{exp.shape}.",
                             f"{what_zh}的形状是{tuple(got.shape)}，正确答案的形状是{exp.shape}。")
        arr = _as_array(got)
    elif want in ("number", "int"):
        if isinstance(got, Tensor):
            if got.numel() == 1 and np.allclose(_as_array(got).reshape(-1), exp.reshape(-1), atol=atol, rtol=rtol):
                return Diagnosis(f"the value is right, but {what_en} is a tensor; the exercise asks for a plain "
                                 "Python number (use .item()).",
                                 f"数值对了，但{what_zh}是张量；题目要的是普通的Python数（用.item()）。")
            return Diagnosis(f"{what_en} is a tensor; the exercise asks for a plain Python number.",
                             f"{what_zh}是张量；题目要的是普通的Python数。")
        if not isinstance(got, (int, float, np.integer, np.floating)):
            return Diagnosis(f"{what_en} is a {_typename(got)}; the exercise asks for a number.",
                             f"{what_zh}是{_typename(got)}；题目要的是一个数。")
        if want == "int" and not isinstance(got, (int, np.integer)):
            if float(got) == float(exp.reshape(-1)[0]):
                return Diagnosis(f"the count is right, but {what_en} is a {_typename(got)}; write it as an int.",
                                 f"个数对了，但{what_zh}是{_typename(got)}；请写成整数（int）。")
            return Diagnosis(f"{what_en} is a {_typename(got)}; a count is an int.",
                             f"{what_zh}是{_typename(got)}；个数应当是整数（int）。")
        arr = np.asarray(float(got))
        exp = exp.reshape(())
    else:  # pragma: no cover
        raise ValueError(want)
    if np.allclose(arr, exp, atol=atol, rtol=rtol):
        if want == "tensor" and detached and (got.requires_grad or got.grad_fn is not None):
            return Diagnosis(f"the values are right, but {what_en} is still part of a graph (it requires grad). "
                             "Store a gradient, which does not.",
                             f"数值对了，但{what_zh}仍连在计算图上（它需要求导）。梯度本身是不需要求导的。")
        return None
    r = _factor(arr, exp)
    if r is not None:
        return _off_by(r)
    if want == "int":
        d = int(round(float(arr) - float(exp)))
        more_en, more_zh = ("too many", "多") if d > 0 else ("too few", "少")
        return Diagnosis(f"{abs(d)} {more_en}.", f"{more_zh}了{abs(d)}个。")
    return Diagnosis(f"the values of {what_en} are not right yet.", f"{what_zh}的数值还不对。")


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


def diagnose(ex_id, *answers, **kw):
    """(ok, kind, diagnosis or traceback text) for ``answers`` to exercise ``ex_id``, without printing.

    kind is "ok", "empty" (no answer yet), "wrong" (the diagnosis is a Diagnosis or None), "crash" (the learner's
    code raised; the text is its traceback) or "unusable" (the check could not use the answer; the text names
    the error)."""
    _load()
    fn, _ = _REGISTRY[ex_id]
    if answers and _is_unanswered(answers[0]):
        return False, "empty", None
    try:
        res = fn(*answers, **kw)
    except Exception as err:                                     # noqa: BLE001 - shown to the learner
        frames = _learner_frames(err.__traceback__)
        if frames:
            text = ("Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
                    + "".join(traceback.format_exception_only(type(err), err)))
            return False, "crash", text
        return False, "unusable", f"{type(err).__name__}: {err}"
    if not isinstance(res, Diagnosis) and bool(res):
        return True, "ok", None
    return False, "wrong", res if isinstance(res, Diagnosis) else None


def verify(ex_id, *answers, **kw):
    """True if ``answers`` solve exercise ``ex_id``."""
    return diagnose(ex_id, *answers, **kw)[0]


def hint(ex_id, lang=None):
    """Print the fuller hint of exercise ``ex_id``."""
    _load()
    lang = _lang(lang)
    print(_TEXT["hint"][lang] + _REGISTRY[ex_id][1][lang])


def check(ex_id, *answers, lang=None, hint=False, **kw):
    """Print ✓, or what is wrong with this answer; the hint comes on the second wrong try or with hint=True."""
    _load()
    lang = _lang(lang)
    ok, kind, info = diagnose(ex_id, *answers, **kw)
    if ok:
        print(_TEXT["ok"][lang])
        return
    if kind == "empty":
        print(_TEXT["empty"][lang])
        if hint:
            print(_TEXT["hint"][lang] + _REGISTRY[ex_id][1][lang])
        return
    if kind == "crash":
        print(_TEXT["crash"][lang])
        print(info, end="" if info.endswith("\n") else "\n")
    elif kind == "unusable":
        print(_TEXT["unusable"][lang].format(err=info))
    else:
        print(_TEXT["no"][lang] + (info.text(lang) if info is not None else _TEXT["wrong"][lang]))
    _ATTEMPTS[ex_id] = _ATTEMPTS.get(ex_id, 0) + 1
    if hint or _ATTEMPTS[ex_id] >= 2:
        print(_TEXT["hint"][lang] + _REGISTRY[ex_id][1][lang])
    else:
        print(_TEXT["more"][lang])


def exercises():
    _load()
    return sorted(_REGISTRY)


def _reset_attempts():
    """Forget earlier wrong tries (the tests use it)."""
    _ATTEMPTS.clear()

