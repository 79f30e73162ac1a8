"""One candidate, one phase, one fresh process: `python -m evaluator.worker SPEC.json`.

Phases: `build` (compile what the candidate compiles, GPU hidden, so builds run in parallel), `run`
(correctness in both modes, the custom-kernel check, timing), `profile` (the reference's op table) and
`baseline` (reference timed eager and compiled). The result file is rewritten after every stage, so a
crash or a kill still leaves the evidence gathered so far.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
from pathlib import Path

from evaluator.config import EvalConfig
from evaluator.runtime import Result


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[1]).read_text())
    _die_with_parent(spec["parent_pid"])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    config = EvalConfig.from_dict(spec["config"])
    result = Result(spec["result_path"])
    mode = spec["mode"]
    if mode == "build":
        from evaluator.phase_build import run_build as phase
    elif mode == "run":
        from evaluator.phase_run import run_candidate as phase
    elif mode == "emulate":
        from evaluator.phase_emulate import run_emulation as phase
    elif mode == "profile":
        from evaluator.phase_reference import run_profile as phase
    else:
        from evaluator.phase_reference import run_baseline as phase
    phase(spec, config, result)
    result.update(stage="done")
    # Skip interpreter and CUDA teardown: after an illegal address it can hang, and the verdict is written.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _die_with_parent(parent_pid: int) -> None:
    """Get SIGKILLed when the evaluator dies, even by SIGKILL: an orphan would hold locks and the GPU.

    The kernel delivers it, so it works while a candidate's hung native code holds the GIL.
    """
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
