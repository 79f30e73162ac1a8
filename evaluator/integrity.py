"""The judge's own code is not the candidate's to change: a snapshot of what judging depends on, taken in
the worker before any candidate code loads, and checked after every stage that ran candidate code.

The static checks see `torch.x = ...` but not an alias (`import torch.cuda as tc; tc.Event.elapsed_time =
...`), nor a module reached at run time (`torch.sys.modules["evaluator.harness"].compare = ...`). What
those do is always the same: an attribute the judge looks up at call time now holds something else, or a
function's code was swapped. So the snapshot records, by identity, the attributes of the modules and
classes the comparison, the timer, the profiler and the result file go through, and of every evaluator
module loaded; any difference is the strict failure `judge_tampered`, naming what changed.

Found changes are put back at once, so the stages after the check judge with the real code again (a
candidate that patches on every call is still caught at the next check). Names added later are not
watched (importing torch._dynamo adds attributes to torch; a candidate may attach helpers to a class):
only names that existed at the snapshot, and names that shadow one inherited from a watched class's base.
Values that change as a matter of course are left out: module data (torch.cuda._initialized) and the
evaluator's mutable state (the sandbox switch, counters, lists).
"""

from __future__ import annotations

import builtins
import json
import math
import os
import pathlib
import re
import statistics
import sys
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.autograd.profiler
import torch.autograd.profiler_util
import torch.nn.functional
import torch.profiler
import torch.utils.cpp_extension

_MISSING = object()
_IMMUTABLE = (str, bytes, int, float, complex, tuple, frozenset, type(None), re.Pattern)
_DESCRIPTORS = (staticmethod, classmethod, property, types.FunctionType, type)
# Names of nn.Module (and subclasses) that a call to a model goes through.
_CALL_PATH = ("forward", "__call__", "_call_impl", "_wrapped_call_impl")
MAX_NAMED = 20  # changed names reported in the evidence


@dataclass
class _Target:
    """One watched namespace: `view(owner)` gives {name: value} of what is watched in it."""

    label: str
    owner: Any
    view: Callable[[Any], dict[str, Any]]
    saved: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # name -> (value, code fingerprint)


def _code(value: Any) -> Any:
    """What a function's behaviour is made of besides its identity: code and defaults; a set's contents."""
    func = value.__func__ if isinstance(value, staticmethod | classmethod) else value
    if isinstance(func, types.FunctionType):
        return (func.__code__, func.__defaults__, func.__kwdefaults__)
    if isinstance(value, set):
        try:
            return frozenset(value)
        except TypeError:
            return None
    return None


def _library_module(mod: types.ModuleType) -> dict[str, Any]:
    """A library module's functions, classes and submodules (its data changes as it works)."""
    return {k: v for k, v in vars(mod).items() if callable(v) or isinstance(v, types.ModuleType)}


def _constant(value: Any) -> bool:
    return isinstance(value, _IMMUTABLE) and not isinstance(value, bool)


def _own_module(mod: types.ModuleType) -> dict[str, Any]:
    """The judge's own module: functions, classes, submodules, constants and the sets of names it reads."""
    return {
        k: v
        for k, v in vars(mod).items()
        if not k.startswith("__") and (callable(v) or isinstance(v, types.ModuleType | set) or _constant(v))
    }


def _class_view(cls: type) -> dict[str, Any]:
    """Everything a class resolves through its bases (a new entry that shadows a base's is a change)."""
    merged: dict[str, Any] = {}
    for klass in reversed(cls.__mro__[:-1]):
        merged.update(vars(klass))
    merged.pop("__dict__", None)
    merged.pop("__weakref__", None)
    return merged


def _own_class(cls: type) -> dict[str, Any]:
    """The judge's own class: its methods and constants (its state, e.g. the sandbox switch, may change)."""
    return {
        k: v
        for k, v in vars(cls).items()
        if isinstance(v, _DESCRIPTORS) or (isinstance(v, str | tuple | frozenset) and not k.startswith("__"))
    }


def _call_path(cls: type) -> dict[str, Any]:
    """The methods a call to a model of this class goes through, wherever in its bases they are defined."""
    found = {}
    for name in _CALL_PATH:
        for klass in cls.__mro__:
            if name in vars(klass):
                found[name] = vars(klass)[name]
                break
    return found


def _targets(extra_modules: list[types.ModuleType]) -> list[_Target]:
    """What the judging depends on, as loaded in this process now."""
    libraries = [builtins, time, statistics, json, re, math, os, pathlib, torch, torch.cuda]
    libraries += [torch.nn.functional, torch.profiler, torch.autograd.profiler]
    libraries += [torch.autograd.profiler_util, torch.utils.cpp_extension]
    out = [_Target(m.__name__, m, _library_module) for m in libraries]
    classes = [torch.Tensor, torch.cuda.Event, torch.nn.Module, pathlib.Path]
    classes += [torch.autograd.profiler_util.FunctionEvent, torch.autograd.profiler_util.EventList]
    out += [_Target(_name(c), c, _class_view) for c in classes]
    modules = {v for v in vars(torch.nn).values() if isinstance(v, type) and issubclass(v, torch.nn.Module)}
    out += [_Target(_name(c), c, _call_path) for c in sorted(modules, key=_name)]
    own = [m for name, m in list(sys.modules.items()) if _is_judge(name) and m is not None]
    for mod in own + extra_modules:
        out.append(_Target(mod.__name__, mod, _own_module))
        for value in list(vars(mod).values()):
            if isinstance(value, type) and value.__module__ == mod.__name__:
                out.append(_Target(_name(value), value, _own_class))
    for t in out:
        t.saved = {k: (v, _code(v)) for k, v in t.view(t.owner).items()}
    return out


def _is_judge(name: str) -> bool:
    return name == "evaluator" or name.startswith("evaluator.")


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _diff(targets: list[_Target], restore: bool) -> list[str]:
    """Qualified names that changed since the snapshot (replaced, deleted, code swapped, or a base's name
    shadowed); with `restore`, each is set back to its snapshot value."""
    changed: list[str] = []
    for t in targets:
        now = t.view(t.owner)
        for name, (value, code) in t.saved.items():
            current = now.get(name, _MISSING)
            if current is value and (code is None or _code(current) == code):
                continue
            changed.append(f"{t.label}.{name}")
            if restore:
                _put_back(t.owner, name, value, code)
    return changed


def _put_back(owner: Any, name: str, value: Any, code: Any) -> None:
    """Best effort: the attribute back to its value (a shadowing entry removed), a function's code and
    defaults and a set's contents back to theirs."""
    try:
        if isinstance(owner, type):
            own = vars(owner).get(name, _MISSING)
            inherited = any(vars(base).get(name, _MISSING) is value for base in owner.__mro__[1:])
            if own is not _MISSING and own is not value and inherited:
                delattr(owner, name)
            elif own is not value and not inherited:
                setattr(owner, name, value)
        elif vars(owner).get(name, _MISSING) is not value:
            setattr(owner, name, value)
        func = value.__func__ if isinstance(value, staticmethod | classmethod) else value
        if isinstance(func, types.FunctionType) and isinstance(code, tuple):
            func.__code__, func.__defaults__, func.__kwdefaults__ = code
        elif isinstance(value, set) and isinstance(code, frozenset):
            value.clear()
            value.update(code)
    except Exception:  # noqa: BLE001 - a read-only attribute: the change is reported all the same
        pass


def settle_torch() -> None:
    """Let torch make its own patches before the snapshot: importing torch._dynamo (which the profiler does
    on first use) wraps torch.manual_seed, and its first torch.compile wraps nn.Module.__init__ and
    __setstate__. Done now, a candidate that compiles (or the profiler) changes nothing watched later."""
    try:
        import torch._dynamo  # noqa: F401 - its import wraps torch.manual_seed
        from torch._dynamo.mutation_guard import install_generation_tagging_init

        install_generation_tagging_init()
    except Exception:  # noqa: BLE001 - another torch: whatever it patches later is reported, not hidden
        pass


class JudgeSnapshot:
    """Identities of what judging depends on, taken now; `extra_modules` are judged-side modules outside
    the evaluator package (the reference problem's module)."""

    def __init__(self, extra_modules: list[types.ModuleType] | None = None) -> None:
        settle_torch()
        self.extra = list(extra_modules or [])
        self.targets = _targets(self.extra)

    def changes(self, restore: bool = True) -> list[str]:
        return _diff(self.targets, restore)


class StageWatch:
    """Checks the snapshot whenever the worker's stage changes (every stage that runs candidate code ends in
    one) and collects what changed, for the verdict."""

    def __init__(self, snapshot: JudgeSnapshot) -> None:
        self.snapshot = snapshot
        self.changed: list[str] = []
        self.checks = 0
        self.seconds = 0.0
        self._diff = _diff  # held here: replacing the module's function does not blind the watch

    def check(self) -> list[str]:
        t0 = time.perf_counter()
        found = self._diff(self.snapshot.targets, True)
        self.checks += 1
        self.seconds += time.perf_counter() - t0
        self.changed += [name for name in found if name not in self.changed]
        return found

    def rebase(self) -> None:
        """A fresh snapshot, after trusted code that may change watched names itself."""
        self.snapshot = JudgeSnapshot(self.snapshot.extra)

    @property
    def tampered(self) -> bool:
        return bool(self.changed)


def watch_stages(result: Any, snapshot: JudgeSnapshot) -> StageWatch:
    """Wrap `result.update` so that each change of stage first checks the snapshot. The watch lives only
    in this closure and the caller's frame: nothing a candidate can reach through a module holds it."""
    watch = StageWatch(snapshot)
    update = result.update

    def checked_update(**fields: Any) -> None:
        stage = fields.get("stage")
        if stage is not None and stage != result.data.get("stage"):
            watch.check()
        update(**fields)

    checked_update.watch = watch  # type: ignore[attr-defined]
    result.update = checked_update
    return watch


def watch_of(result: Any) -> StageWatch | None:
    return getattr(result.update, "watch", None)


@contextmanager
def trusted(result: Any) -> Iterator[None]:
    """Judge-side work that may itself change watched names (torch.compile imports and patches): checked
    before, re-snapshotted after."""
    watch = watch_of(result)
    if watch is not None:
        watch.check()
    try:
        yield
    finally:
        if watch is not None:
            watch.rebase()


def finish(result: Any, watch: StageWatch) -> None:
    """Last check; a tampered run gets `judge_tampered` and its timing is not reported as a speedup."""
    watch.check()
    strict = dict(result.data.get("strict") or {})
    strict["judge_integrity"] = {"checks": watch.checks, "seconds": round(watch.seconds, 4)}
    if not watch.tampered:
        result.update(strict=strict)
        return
    strict["judge_tampered"] = watch.changed[:MAX_NAMED]
    failures = set(result.data.get("strict_failures") or []) | {"judge_tampered"}
    timing = result.data.get("timing")
    if timing is not None:
        timing = {**timing, "untrusted": "the judge was tampered with"}
    result.update(
        strict=strict,
        strict_failures=sorted(failures),
        timing=timing,
        speedup_eager=None,
        speedup_compile=None,
    )
