"""Every component that declares something to the configuration (:mod:`uno.config.parts`):
the algorithms and their parameters, the load balancers, the topology and workload kinds and the
values of the fields they own. The ``uno`` package imports this first, so that the schema
(:mod:`uno.config.schema`) is assembled from complete declarations."""

from __future__ import annotations

import uno.cc.registry  # noqa: F401
import uno.lb.registry  # noqa: F401
import uno.net.int  # noqa: F401
import uno.net.port  # noqa: F401
import uno.topo.registry  # noqa: F401
import uno.workload.registry  # noqa: F401
