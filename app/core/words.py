"""Words written from figures, one way everywhere: a list of names that stays one line however long
(`listed`: the first few, then "and N more"). The CLI, the GUI and the core's own messages use it."""

from __future__ import annotations

from collections.abc import Iterable


def listed(names: Iterable[str], most: int = 5, sep: str = ", ") -> str:
    """At most `most` names joined by `sep`, then how many more ("a, b, c and 4 more")."""
    names = list(names)
    shown = sep.join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
