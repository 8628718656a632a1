"""Narrowing helpers for decoded JSON (which is ``Any`` to a type checker)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, cast


def as_dict(value: Any) -> Dict[str, Any]:
    """``value`` if it is a JSON object, else an empty dict."""
    return cast(Dict[str, Any], value) if isinstance(value, dict) else {}


def dict_list(value: Any) -> List[Dict[str, Any]]:
    """The JSON objects in ``value`` if it is an array, else an empty list."""
    if not isinstance(value, list):
        return []
    return [as_dict(item) for item in cast(List[Any], value) if isinstance(item, dict)]


def opt_str(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def opt_int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
