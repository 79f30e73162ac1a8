"""Pull the candidate program out of raw model output."""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def extract_candidate(text: str) -> str | None:
    """Return the fenced block that defines `ModelNew` (the last such, as models revise), else None.

    Python-tagged and untagged fences count; an unterminated final fence (output cut at max_tokens)
    still counts when it defines ModelNew. A bare program with no fence counts when it defines ModelNew
    at the top level. Never raises: the caller turns None into a `no_code` verdict.
    """
    if not text:
        return None
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    defining = [
        body for lang, body in blocks if lang in ("", "python", "py", "python3") and _defines_model_new(body)
    ]
    if defining:
        return defining[-1].rstrip() + "\n"
    if not blocks and _defines_model_new(text):
        return text.rstrip() + "\n"
    return None


def _defines_model_new(code: str) -> bool:
    return re.search(r"^class\s+ModelNew\b", code, re.MULTILINE) is not None
