"""A switch: forwards by destination host; among equal-cost ports it picks by a hash of the
packet's (src, dst, entropy) key mixed with a per-switch salt, so switches at one tier choose
independently (no polarisation) and the choice depends only on the run seed."""

from __future__ import annotations

from uno.net.hashing import ecmp_index


class Switch:
    """Forwarding element. ``fib[dst_host_id]`` is the tuple of equal-cost output ports."""

    __slots__ = ("name", "node_id", "dc", "tier", "salt", "fib", "ports", "_choice", "_single")

    #: entries kept in the per-switch choice cache before it is cleared
    CACHE_LIMIT = 1 << 16

    def __init__(self, name: str, node_id: int, dc: int, tier: str, salt: int):
        self.name = name
        self.node_id = node_id
        self.dc = dc
        self.tier = tier
        self.salt = salt
        self.fib: list[tuple] = []
        self._single: list = []
        self.ports: list = []
        # hash key -> chosen port; the choice is a pure function of (key, salt, fib), so the
        # cache only saves recomputing the hash (ECMP flows reuse one key for every packet)
        self._choice: dict = {}

    def set_fib(self, fib: list[tuple]) -> None:
        """Install equal-cost port tuples per destination host id."""
        self.fib = fib
        self._single = [ports[0] if len(ports) == 1 else None for ports in fib]
        self._choice.clear()

    def receive(self, pkt) -> None:
        dst = pkt.dst
        port = self._single[dst]
        if port is not None:
            port.receive(pkt)
            return
        ports = self.fib[dst]
        key = pkt.hkey
        port = self._choice.get(key)
        if port is None:
            port = ports[ecmp_index(key, self.salt, len(ports))]
            if len(self._choice) >= self.CACHE_LIMIT:
                self._choice.clear()
            self._choice[key] = port
        port.receive(pkt)

    def __repr__(self) -> str:
        return f"Switch({self.name})"


def port_picker(known_tiers, tiers, port_kinds, field: str, skip_tiers=()):
    """The rule :func:`switch_ports` picks switch egress ports by, as a predicate of a port's
    switch tier and link kind: tier in ``tiers`` (None: every tier but ``skip_tiers``), link
    kind in ``port_kinds`` (empty: any). A tier not among ``known_tiers`` (the topology's
    switch tiers) stops the run, naming the config field ``field``. (The fluid engine picks
    its links by the same rule: uno.fluid.int_records.)"""
    from uno.core.errors import ConfigError

    wanted = None if tiers is None else set(tiers)
    known = set(known_tiers)
    if wanted is not None and wanted - known:
        raise ConfigError(
            field,
            f"{sorted(wanted - known)} name no switch tier of this topology (tiers: {sorted(known)})",
        )
    kinds = set(port_kinds)

    def picked(tier: str, kind: str) -> bool:
        if kinds and kind not in kinds:
            return False
        return (tier in wanted) if wanted is not None else (tier not in skip_tiers)

    return picked


def switch_ports(network, tiers, port_kinds, field: str, skip_tiers=()) -> list:
    """The egress ports of ``network``'s switches whose tier is in ``tiers`` (None: every tier
    but ``skip_tiers``) and whose link kind is in ``port_kinds`` (empty: any), in port order.
    A tier the topology lacks stops the run, naming the config field ``field``."""
    known = {sw.tier for sw in network.switches.values()}
    picked = port_picker(known, tiers, port_kinds, field, skip_tiers)
    return [
        p for p in network.ports if isinstance(p.owner, Switch) and picked(p.owner.tier, p.kind)
    ]
