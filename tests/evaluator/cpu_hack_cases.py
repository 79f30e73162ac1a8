"""C++ candidates for the `cpu` backend that each get around one strict rule that existed before, and the
rule that now catches them. They use cpu_cases' shared extension (built once for the whole suite)."""

from __future__ import annotations

from cpu_cases import candidate

# A legit control: the second ReLU gives back what it is given (a copy), the first does the work.
RELU_TWICE = candidate("return ext.relu_ok(ext.relu_ok(x))")

# The answer from a different op than the reference's torch.relu (so its kernel does run fewer times),
# handed through an extension call that copies it (needed by the output, with a real share of the time).
COPY_AFTER_OTHER_OP = candidate("return ext.copy_only(torch.clamp(x, min=0.0))")

# Right whenever it is checked; in the timer, once the warm-up has called it three times in a row on the
# same inputs, it hands back its last output for every new input (a call on the same inputs again, as in
# the pointer trials, computes: so no other check sees it).
TIMED_CACHE = candidate(
    "self.streak = self.streak + 1 if x is self.prev else 1\n"
    "self.prev = x\n"
    "if self.streak >= 3:\n"
    "    self.timed = True\n"
    "elif self.streak == 2:\n"
    "    self.timed = False\n"
    "elif self.timed and self.out is not None:\n"
    "    return self.out\n"
    "self.out = ext.relu_ok(x)\n"
    "return self.out",
    init_body="self.prev = None\nself.streak = 0\nself.timed = False\nself.out = None",
)

# The timer's clock replaced through an alias the static checks do not follow.
PATCH_CLOCK_ALIAS = candidate(
    "return ext.relu_ok(x)",
    extra="import time as clock\n_real = clock.perf_counter\nclock.perf_counter = lambda: _real() * 0.5",
)

# The judge's comparison replaced through sys.modules, on every call, by a forward that returns zeros.
PATCH_COMPARE = candidate(
    "judge = torch.sys.modules['evaluator.' + 'harness']\n"
    "judge.compare = _always_ok\n"
    "return ext.zeros_out(x)",
    extra=(
        "def _always_ok(out, ref, atol, rtol):\n"
        "    return {'ok': True, 'max_abs_err': 0.0, 'max_rel_err': 0.0, 'ref_max_abs': 1.0}"
    ),
)

# Loads an evaluator module it was not given (importlib is reached through torch, not imported).
IMPORT_JUDGE = candidate(
    "return ext.relu_ok(x)",
    extra="torch.utils.cpp_extension.importlib.import_module('evaluator.' + 'static_checks')",
)
