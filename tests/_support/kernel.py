"""A live Jupyter kernel (jupyter_client + ipykernel) for the memory tests (tests/test_stepper_rerun.py,
tests/test_stepper_memory.py): it runs this worktree's autogradviz, executes code as a notebook does (the cell id in
the request's metadata, as JupyterLab and Notebook 7 send it) and reads values back."""
import os
import queue
import time
from pathlib import Path

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]


class Kernel:
    def __init__(self):
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        self.km = jupyter_client.KernelManager(kernel_name="python3")   # ipykernel's own spec: this Python
        self.km.start_kernel(env=env, cwd=str(ROOT))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def run(self, code, cell_id=None, timeout=120):
        """Execute ``code`` as a notebook would (``cellId`` in the metadata); return (reply, stdout, error)."""
        content = dict(code=code, silent=False, store_history=True, user_expressions={}, allow_stdin=False,
                       stop_on_error=True)
        msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id} if cell_id else {})
        self.kc.shell_channel.send(msg)
        mid = msg["header"]["msg_id"]
        out, err = [], None
        deadline = time.time() + timeout
        while True:
            try:
                m = self.kc.get_iopub_msg(timeout=max(0.1, deadline - time.time()))
            except queue.Empty:
                raise TimeoutError(code[:60])
            if m["parent_header"].get("msg_id") != mid:
                continue
            if m["msg_type"] == "stream":
                out.append(m["content"]["text"])
            elif m["msg_type"] == "error":
                err = "\n".join(m["content"]["traceback"])
            elif m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                break
        while True:
            reply = self.kc.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == mid:
                break
        return reply, "".join(out), err

    def value(self, expr):
        _, out, err = self.run(f"print('@@', repr({expr}))")
        assert err is None, err
        line = [x for x in out.splitlines() if x.startswith("@@ ")][-1]
        return eval(line[3:])  # noqa: S307 (the test runs its own code)

    def stop(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
