"""The name the commands and the results library import ``ssdpts verify``'s check by: it lives in
verify/integrity.py (verification's one home, with verify/proof.py)."""

from .verify.integrity import CONFIGURED, Problem, Result, check, describe, to_json  # noqa: F401

__all__ = ["CONFIGURED", "Problem", "Result", "check", "describe", "to_json"]
