"""Self-checks for the lessons' exercises.

Each lesson's checks live in ``autogradviz/course/lessonNN.py`` and register themselves with ``@exercise``.
A notebook cell calls ``check("02.1", answer)``: it prints a ✓ or a hint in the lesson's language (the
visualizer's language setting). ``verify`` returns the verdict without printing (the tests use it).

A check computes what the right answer is (with autogradviz itself or from first principles); it never
compares with a value pasted from somewhere.
"""
import importlib
import pkgutil

__all__ = ["exercise", "check", "verify"]

_REGISTRY = {}

_OK = {"en": "✓ Correct!", "zh": "✓ 正确！"}
_NO = {"en": "✗ Not yet. Hint: ", "zh": "✗ 还不对。提示："}


def exercise(ex_id, hint_en, hint_zh):
    """Register ``fn(*answers) -> bool`` as the check of exercise ``ex_id``."""
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


def verify(ex_id, *answers, **kw):
    """True if ``answers`` solve exercise ``ex_id``. Errors inside the check count as 'not yet'."""
    _load()
    fn, _ = _REGISTRY[ex_id]
    try:
        return bool(fn(*answers, **kw))
    except Exception:
        return False


def check(ex_id, *answers, lang=None, **kw):
    """Print ✓ or a hint for exercise ``ex_id``."""
    _load()
    lang = _lang(lang)
    _, hints = _REGISTRY[ex_id]
    if verify(ex_id, *answers, **kw):
        print(_OK[lang])
    else:
        print(_NO[lang] + hints[lang])


def exercises():
    _load()
    return sorted(_REGISTRY)
