"""Runtime sandbox inside a worker: an audit hook that refuses process, network and file-system side
effects while candidate code runs (compiler runs inside load_inline excepted).

The static checks are the first line; this catches what they cannot see (e.g. a C++ extension calling
back into Python, or names reached indirectly). Audit hooks cannot be removed, so the hook is installed
once and switched by `Guard.active`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_BLOCKED = {
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "pty.spawn",
    "socket.connect",
    "socket.bind",
    "socket.sendto",
    "socket.sendmsg",
    "os.kill",
    "os.killpg",
    "os.remove",
    "os.rename",
    "os.rmdir",
    "os.truncate",
    "os.chmod",
    "os.chown",
    "os.link",
    "os.symlink",
    "shutil.rmtree",
    "shutil.move",
    "shutil.copyfile",
    "ctypes.dlopen",
    "ctypes.dlsym",
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
    "webbrowser.open",
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class Guard:
    active = False
    allowed_dirs: tuple[str, ...] = ()
    building: Callable[[], bool] = staticmethod(lambda: False)
    refused: list[str] = []


def install(allowed_dirs: list[str], building: Callable[[], bool]) -> None:
    Guard.allowed_dirs = tuple(os.path.realpath(d) + os.sep for d in allowed_dirs)
    Guard.building = staticmethod(building)  # type: ignore[assignment]
    sys.addaudithook(_hook)


@contextmanager
def suspended() -> Iterator[None]:
    """The harness's own I/O (its result file) while candidate code may still be on the stack."""
    was_active, Guard.active = Guard.active, False
    try:
        yield
    finally:
        Guard.active = was_active


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not Guard.active or Guard.building():
        return
    if event in _BLOCKED:
        _refuse(f"{event} is refused inside the evaluator's sandbox")
    elif event == "import" and args and isinstance(args[0], str) and _judge_module(args[0]):
        _refuse(f"importing {args[0]} is refused: the evaluator's own code is not the candidate's to use")
    elif event == "exec" and args and _judge_code(args[0]):
        _refuse(f"running {args[0].co_filename} is refused: the evaluator's own code is not the candidate's")
    elif event == "open" and args and isinstance(args[0], str | bytes):
        path = os.fsdecode(args[0])
        mode = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        writing = any(c in (mode or "") for c in "wax+") or bool(flags & _WRITE_FLAGS)
        if writing and not os.path.realpath(path).startswith(Guard.allowed_dirs):
            _refuse(f"writing {path} is refused outside the build and scratch directories")


# What a region program imports (the launcher and what it needs); the rest of the evaluator is the judge.
_CANDIDATE_MODULES = {
    "evaluator",
    "evaluator.regions",
    "evaluator.regions.launch",
    "evaluator.regions.native",
    "evaluator.regions.nvrtc",
}


def _judge_module(name: str) -> bool:
    """The audit event `import` fires only for a module not imported yet; the ones already loaded are
    watched by evaluator.integrity instead."""
    return (name == "evaluator" or name.startswith("evaluator.")) and name not in _CANDIDATE_MODULES


_EVALUATOR_DIR = os.path.dirname(os.path.realpath(__file__)) + os.sep


def _judge_code(code: Any) -> bool:
    """A module body of the evaluator about to run: importlib.import_module raises no `import` event, but
    the module it loads is executed through exec, whose event carries the code and so its file."""
    path = getattr(code, "co_filename", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return False
    real = os.path.realpath(path)
    if not real.startswith(_EVALUATOR_DIR):
        return False
    parts = real[len(_EVALUATOR_DIR) : -len(".py")].split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return _judge_module(".".join(["evaluator", *parts]))


def _refuse(message: str) -> None:
    Guard.refused.append(message)
    raise PermissionError(message)
