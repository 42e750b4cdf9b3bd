"""Data-parallel training across two datacenters (Uno paper §5.1): after each iteration's
backward pass, the replicas all-reduce their gradients across the datacenters, a burst of
inter-DC traffic of ``iteration_bytes`` (the paper quotes ~70-500 MiB per iteration for Llama
70B; default 70 MiB) carried by ``flows_per_iteration`` flows between fixed pairs of hosts, one
host of each pair in each datacenter (a ring's cross-DC links). With ``bidirectional`` the flows
alternate direction (a ring all-reduce sends both ways). Iteration i + 1 starts
``compute_us`` after the last flow of iteration i finished (the next backward pass); flows of
iteration i are tagged ``it<i>``. The analysis reports each iteration's collective completion
time and its ratio to the ideal (experiments/fig13_ai).

The Uno artifact simulates one burst only (8 flows of 35 MB, one direction, no iterations;
docs/unorc_artifact_notes.md §8): ``iterations=1 bidirectional=false flows_per_iteration=8
iteration_bytes=280000000`` reproduces it.
"""

from __future__ import annotations

import numpy as np

from uno.core.errors import ConfigError
from uno.core.units import us_to_ps
from uno.transport.flow import FlowSpec
from uno.workload.hosts import HostFacts


def allreduce_flows(cfg, hosts: HostFacts, rng: np.random.Generator) -> list[FlowSpec]:
    dcs = sorted(set(hosts.dc))
    if len(dcs) != 2:
        raise ConfigError("workload.kind", "allreduce needs a topology with two datacenters")
    n = cfg.flows_per_iteration
    a, b = hosts.in_dc(dcs[0]), hosts.in_dc(dcs[1])
    if n > min(len(a), len(b)):
        raise ConfigError(
            "workload.flows_per_iteration",
            f"must be <= {min(len(a), len(b))} (hosts per datacenter), got {n}",
        )
    left = [int(h) for h in rng.choice(a, size=n, replace=False)]
    right = [int(h) for h in rng.choice(b, size=n, replace=False)]
    size = cfg.iteration_bytes // n
    if size <= 0:
        raise ConfigError("workload.iteration_bytes", f"must be >= flows_per_iteration ({n})")
    specs = []
    for it in range(cfg.iterations):
        tag = f"it{it}"
        after = f"it{it - 1}" if it else ""
        start = us_to_ps(cfg.compute_us) if it else us_to_ps(cfg.start_us)
        for j in range(n):
            src, dst = left[j], right[j]
            if cfg.bidirectional and j % 2:
                src, dst = dst, src
            specs.append(FlowSpec(len(specs), src, dst, size, start, tag, after))
    return specs
