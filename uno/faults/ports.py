"""Which ports a fault names (``faults.link_failures[i].ports``, ``faults.losses[i].ports``):
glob patterns over port names (``"dc0/border->dc1/border#0"``), each with its reverse
(``b->a#i`` for ``a->b#i``) when ``both_directions``. Every engine resolves them here."""

from __future__ import annotations

import fnmatch

from uno.core.errors import ConfigError


def ports_matching(names, patterns, both_directions: bool, field: str) -> list[str]:
    """The names among ``names`` that ``patterns`` match (and their reverses with
    ``both_directions``), in the order first matched; a pattern that matches none stops the run
    naming ``field.ports[i]``."""
    known = set(names)
    chosen: dict[str, None] = {}
    for i, pat in enumerate(patterns):
        hits = [n for n in names if fnmatch.fnmatchcase(n, pat)]
        if not hits:
            raise ConfigError(f"{field}.ports[{i}]", f"{pat!r} matches no port")
        for name in hits:
            chosen[name] = None
            if both_directions:
                a, _, rest = name.partition("->")
                b, sep, idx = rest.partition("#")
                reverse = f"{b}->{a}{sep}{idx}"
                if reverse in known:
                    chosen[reverse] = None
    return list(chosen)
