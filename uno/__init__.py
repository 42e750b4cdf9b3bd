"""uno: simulate congestion control, load balancing and loss recovery inside and across datacenters.

Public entry points:

- :func:`uno.api.compose` builds a validated run configuration from Hydra overrides;
- :func:`uno.api.run` runs it in-process and returns a :class:`uno.api.RunResult`;
- ``uno-run`` (``uno.cli:main``) is the Hydra command line entry point.
"""

from pathlib import Path

from uno.core.jit_cache import configure as _configure_jit_cache

_configure_jit_cache(Path(__file__).parent)  # before any kernel is defined

import uno.components  # noqa: E402, F401  (the configuration is assembled from their declarations)
from uno.api import RunResult, compose, run  # noqa: E402
from uno.version import __version__  # noqa: E402

__all__ = ["RunResult", "__version__", "compose", "run"]
