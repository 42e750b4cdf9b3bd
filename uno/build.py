"""Turn a validated run configuration into a ready-to-run engine (``engine.kind``): the packet
engine (:class:`uno.simulation.Simulation`, assembled by :mod:`uno.packet_engine` from the run's
:class:`uno.scenario.Scenario`), the fluid and max-min engines of :mod:`uno.fluid`, or the
hybrid of both."""

from __future__ import annotations

from uno.core.errors import ConfigError
from uno.core.rng import RngStreams
from uno.packet_engine import packet_port_class, populate_packet, resolve_dataplane
from uno.scenario import build_scenario
from uno.simulation import Simulation


def build_simulation(cfg):
    """Build a ready-to-run simulation from ``cfg`` (a RunConfig object or DictConfig), with the
    engine ``cfg.engine.kind`` names."""
    kind = cfg.engine.kind
    if kind in ("fluid", "maxmin") and cfg.engine.dataplane != "auto":
        raise ConfigError(
            "engine.dataplane",
            f"is for the packet and hybrid engines' packets; engine.kind={kind} has no packet "
            "ports: set engine.dataplane=auto (an experiment may pin one for its packet runs)",
        )
    if kind == "hybrid":
        from uno.fluid.hybrid import HybridSimulation

        return HybridSimulation(cfg)
    if kind in ("fluid", "maxmin"):
        from uno.fluid.engine import FluidSimulation
        from uno.fluid.maxmin import MaxMinSimulation

        rng = RngStreams(cfg.seed)
        engine = FluidSimulation if kind == "fluid" else MaxMinSimulation
        return engine(cfg, build_scenario(cfg, rng), rng)
    dataplane = resolve_dataplane(cfg)
    sim = Simulation(cfg.seed)
    scenario = build_scenario(cfg, sim.rng)
    return populate_packet(
        cfg, sim, scenario, scenario.flows, packet_port_class(cfg, dataplane), dataplane
    )
