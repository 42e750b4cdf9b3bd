"""An explicit list of flows from the config."""

from __future__ import annotations

from uno.core.errors import ConfigError
from uno.core.units import us_to_ps
from uno.transport.flow import FlowSpec
from uno.workload.hosts import HostFacts


def explicit_flows(cfg, hosts: HostFacts, rng=None) -> list[FlowSpec]:
    specs = []
    if not cfg.flows:
        raise ConfigError(
            "workload.flows", "the list is empty; give at least one {src, dst, size_bytes}"
        )
    for i, f in enumerate(cfg.flows):
        for key in ("src", "dst"):
            h = getattr(f, key)
            if not 0 <= h < hosts.n_hosts:
                raise ConfigError(
                    f"workload.flows[{i}].{key}",
                    f"host {h} does not exist; hosts are 0..{hosts.n_hosts - 1}",
                )
        if f.src == f.dst:
            raise ConfigError(
                f"workload.flows[{i}].dst", f"equals src ({f.src}); a flow needs two hosts"
            )
        stop_ps = None
        if f.stop_us is not None:
            if not f.stop_us > f.start_us:
                raise ConfigError(
                    f"workload.flows[{i}].stop_us",
                    f"{f.stop_us} is not after the flow's start_us ({f.start_us})",
                )
            stop_ps = us_to_ps(f.stop_us)
        specs.append(
            FlowSpec(
                i,
                int(f.src),
                int(f.dst),
                int(f.size_bytes),
                us_to_ps(f.start_us),
                f.tag,
                stop_ps=stop_ps,
            )  # fmt: skip
        )
    return specs
