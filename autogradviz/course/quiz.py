"""A short multiple-choice quiz as an ipywidgets form, for the recap lesson.

Every question carries a little program. The right option is not stored: it is what the program prints when it
runs, with autogradviz (the tests also run each program with real PyTorch and require the same answer).
``Quiz(QUESTIONS)`` shows the questions; "Check" marks each answer ✓ or ✗ in the lesson's language.
"""
import ipywidgets as widgets

__all__ = ["Quiz", "QUESTIONS", "run_program"]

_TEXT = {
    "check": {"en": "Check", "zh": "检查"},
    "right": {"en": "✓ right", "zh": "✓ 答对了"},
    "wrong": {"en": "✗ not this one: run the program and look", "zh": "✗ 不是这个：运行一下这段程序，看看结果"},
    "empty": {"en": "… no answer chosen", "zh": "……还没有选答案"},
    "score": {"en": "{n} of {total} right", "zh": "共{total}题，答对{n}题"},
    "error": {"en": "an error", "zh": "出错"},
}


def run_program(code, lib):
    """Run ``code`` with ``torch`` bound to ``lib``; return the repr of its last name ``result``, or the error's
    class name if it raises."""
    ns = {"torch": lib}
    try:
        exec(compile(code, "<quiz>", "exec"), ns)  # noqa: S102
    except Exception as err:                                  # noqa: BLE001 - the answer is the error itself
        return type(err).__name__
    return repr(ns["result"])


QUESTIONS = [
    {"en": "Is `y` a leaf?", "zh": "`y`是叶子张量吗？",
     "code": "x = torch.ones(2, requires_grad=True)\ny = x * 3\nresult = y.is_leaf",
     "options": ["True", "False"]},
    {"en": "What does `x.grad` hold?", "zh": "`x.grad`的值是多少？",
     "code": ("x = torch.ones(2, requires_grad=True)\ny = (x * 3).sum()\ny.backward(retain_graph=True)\n"
              "y.backward()\nresult = x.grad"),
     "options": ["tensor([3., 3.])", "tensor([6., 6.])", "RuntimeError"]},
    {"en": "And without `retain_graph=True`?", "zh": "不写`retain_graph=True`又会怎样？",
     "code": ("x = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\ny.backward()\ny.backward()\n"
              "result = x.grad"),
     "options": ["tensor([2., 2.])", "tensor([4., 4.])", "RuntimeError"]},
    {"en": "Does `z` require grad?", "zh": "`z`需要求导吗？",
     "code": "x = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n    z = x * 2\nresult = z.requires_grad",
     "options": ["True", "False"]},
    {"en": "Which dtype?", "zh": "结果是哪种dtype？",
     "code": "result = torch.Tensor(torch.tensor([1, 2])).dtype",
     "options": ["torch.float32", "torch.int64"]},
    {"en": "What is the second number of the pair?", "zh": "这个二元组的第二个数是多少？",
     "code": ("x = torch.ones(2, requires_grad=True)\na, b = x.unbind()\n"
              "result = (b * 2).grad_fn.next_functions[0][1]"),
     "options": ["0", "1"]},
    # lessons 07-12
    {"en": "A hook on `h` (lesson 07). What does `x.grad` hold?", "zh": "`h`上挂了一个钩子（第07课）。`x.grad`的值是多少？",
     "code": ("x = torch.ones(2, requires_grad=True)\nh = x * 3\nh.register_hook(lambda g: g * 10)\n"
              "h.sum().backward()\nresult = x.grad"),
     "options": ["tensor([3., 3.])", "tensor([10., 10.])", "tensor([30., 30.])"]},
    {"en": "A custom Function whose backward disagrees with its forward (lesson 08). What does `x.grad` hold?",
     "zh": "一个自定义函数，它的backward和forward对不上（第08课）。`x.grad`的值是多少？",
     "code": ("class Double(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
              "        return x * 2\n\n    @staticmethod\n    def backward(ctx, g):\n        return g * 3\n\n"
              "x = torch.ones(2, requires_grad=True)\nDouble.apply(x).sum().backward()\nresult = x.grad"),
     "options": ["tensor([2., 2.])", "tensor([3., 3.])", "RuntimeError"]},
    {"en": "Does the gradient `g` require grad itself (lesson 09)?", "zh": "梯度`g`本身需要求导吗（第09课）？",
     "code": ("x = torch.tensor(3.0, requires_grad=True)\n"
              "g, = torch.autograd.grad(x ** 2, x, create_graph=True)\nresult = g.requires_grad"),
     "options": ["True", "False"]},
    {"en": "Two backward passes and no `zero_grad` (lesson 10). What does `w.grad` hold?",
     "zh": "两次反向传播，中间没有`zero_grad`（第10课）。`w.grad`的值是多少？",
     "code": ("w = torch.tensor(1.0, requires_grad=True)\nfor step in range(2):\n    loss = w * 2\n"
              "    loss.backward()\nresult = w.grad"),
     "options": ["tensor(2.)", "tensor(4.)", "RuntimeError"]},
    {"en": "`detach` in a formula (lesson 11). What does `x.grad` hold?", "zh": "公式里的`detach`（第11课）。`x.grad`的值是多少？",
     "code": "x = torch.tensor(2.0, requires_grad=True)\ny = x * x.detach()\ny.backward()\nresult = x.grad",
     "options": ["tensor(2.)", "tensor(4.)", "RuntimeError"]},
    {"en": "A tensor made in inference mode, then used with `w` (lesson 11). What happens?",
     "zh": "在推理模式下创建的张量，随后和`w`一起运算（第11课）。会怎样？",
     "code": ("w = torch.ones(2, requires_grad=True)\nwith torch.inference_mode():\n    x = torch.ones(2)\n"
              "(w * x).sum().backward()\nresult = w.grad"),
     "options": ["tensor([1., 1.])", "RuntimeError"]},
    {"en": "What shape has the Jacobian of this function of three numbers (lesson 12)?",
     "zh": "这个三元函数的雅可比矩阵是什么形状（第12课）？",
     "code": ("def f(v):\n    return v * v\n\nJ = torch.autograd.functional.jacobian(f, torch.tensor([1.0, 2.0, 3.0]))\n"
              "result = J.shape"),
     "options": ["torch.Size([3])", "torch.Size([3, 3])", "torch.Size([1, 3])"]},
]


def _lang(lang):
    if lang is not None:
        return lang
    from ..viz.i18n import get_lang
    return get_lang()


class Quiz(widgets.VBox):
    """The questions as radio buttons, a Check button and a score line."""

    def __init__(self, questions=QUESTIONS, lang=None):
        import autogradviz
        self.lang = _lang(lang)
        self.questions = list(questions)
        self.answers = [run_program(q["code"], autogradviz) for q in self.questions]
        self.choices, self.marks, rows = [], [], []
        for i, q in enumerate(self.questions):
            head = widgets.HTML(f"<b>{i + 1}.</b> " + _code_html(q[self.lang]) + "<pre>" + _escape(q["code"])
                                + "</pre>")
            choice = widgets.RadioButtons(options=q["options"], value=None, layout=widgets.Layout(width="auto"))
            mark = widgets.HTML("")
            self.choices.append(choice)
            self.marks.append(mark)
            rows.append(widgets.VBox([head, widgets.HBox([choice, mark])]))
        self.button = widgets.Button(description=_TEXT["check"][self.lang])
        self.score = widgets.HTML("")
        self.button.on_click(lambda _: self.check())
        super().__init__(rows + [widgets.HBox([self.button, self.score])])

    def check(self):
        """Mark every answer; returns the number of right ones."""
        right = 0
        for choice, mark, answer in zip(self.choices, self.marks, self.answers):
            if choice.value is None:
                mark.value = _TEXT["empty"][self.lang]
            elif choice.value == answer:
                mark.value = _TEXT["right"][self.lang]
                right += 1
            else:
                mark.value = _TEXT["wrong"][self.lang]
        self.score.value = _TEXT["score"][self.lang].format(n=right, total=len(self.answers))
        return right

    def __repr__(self):
        return f"<Quiz: {len(self.questions)} questions>"

    def _repr_mimebundle_(self, **kwargs):
        """The widget view, plus a static HTML copy of the questions for viewers without widgets."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, tuple):       # (data, metadata)
            data = bundle[0]
        else:
            data = bundle
        if isinstance(data, dict):
            data["text/html"] = self.static_html()
        return bundle

    def static_html(self):
        parts = []
        for i, q in enumerate(self.questions):
            opts = "".join(f"<li>○ <code>{_escape(o)}</code></li>" for o in q["options"])
            parts.append(f"<p><b>{i + 1}.</b> {_code_html(q[self.lang])}</p><pre>{_escape(q['code'])}</pre>"
                         f"<ul style='list-style:none'>{opts}</ul>")
        return "<div class='autogradviz-quiz'>" + "".join(parts) + "</div>"


def _escape(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _code_html(s):
    """`code` spans of a question as <code>."""
    parts = _escape(s).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))
