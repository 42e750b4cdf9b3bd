"""The network: hosts, switches and ports instantiated from a topology and its routing, plus
packet accounting (injected, delivered, dropped with reason, in flight)."""

from __future__ import annotations

from collections import Counter

from uno.core.errors import InvariantError
from uno.core.packet import KIND_NAMES
from uno.core.rng import RngStreams
from uno.net.host import Host
from uno.net.phantom import PhantomQueue
from uno.net.port import MARK_PHANTOM, MARK_PHYSICAL, Port
from uno.net.red import RedMarker
from uno.net.switch import Switch
from uno.topo.base import HOST
from uno.topo.routing import Routing


class Network:
    """Instantiated network elements of one simulation."""

    def __init__(self, engine, routing: Routing, rng: RngStreams):
        self.engine = engine
        self.routing = routing
        topo = routing.topo
        self.injected = [0, 0, 0]  # by packet kind
        self.delivered = [0, 0, 0]
        self.dropped: Counter = Counter()  # (reason, kind name) -> packets
        self.in_flight = 0
        self.hosts: list[Host] = []
        self.switches: dict[str, Switch] = {}
        salts = rng.stream("ecmp_salt").integers(0, 2**63, size=max(1, len(topo.switches))).tolist()
        node_objs: list = []
        for i, spec in enumerate(topo.nodes):
            if spec.kind == HOST:
                host = Host(spec.name, routing.host_id_of_node[i], spec.dc, self)
                self.hosts.append(host)
                node_objs.append(host)
            else:
                sw = Switch(spec.name, i, spec.dc, spec.tier, int(salts[len(self.switches)]))
                self.switches[spec.name] = sw
                node_objs.append(sw)
        self.node_objs = node_objs
        self.ports: list[Port] = []
        seen: Counter = Counter()
        for e in routing.edges:
            a = topo.nodes[e.src].name
            b = topo.nodes[e.dst].name
            seen[(a, b)] += 1
            name = f"{a}->{b}"
            if seen[(a, b)] > 1 or _parallel(routing, e):
                name += f"#{seen[(a, b)] - 1}"
            port = Port(engine, self, name, e.rate_bps, e.delay_ps, e.buffer_bytes, e.kind)
            port.connect(node_objs[e.dst])
            port.owner = node_objs[e.src]
            self.ports.append(port)
            owner = node_objs[e.src]
            if isinstance(owner, Host):
                if owner.nic is not None:
                    raise ValueError(
                        f"host {owner.name} has more than one link; hosts have one NIC"
                    )
                owner.nic = port
            else:
                owner.ports.append(port)
        for host in self.hosts:
            if host.nic is None:
                raise ValueError(f"host {host.name} is not connected")
        for node_index, obj in enumerate(node_objs):
            if isinstance(obj, Switch):
                obj.set_fib(
                    [tuple(self.ports[e] for e in hops) for hops in routing.next_hops[node_index]]
                )
        self.port_by_name = {p.name: p for p in self.ports}

    # ---- configuration ------------------------------------------------------------------
    def switch_ports(self, kinds: list[str] | None = None) -> list[Port]:
        """Output ports owned by switches, optionally only on links of the given kinds."""
        return [
            p for p in self.ports if isinstance(p.owner, Switch) and (not kinds or p.kind in kinds)
        ]

    def configure_marking(
        self,
        switch_cfg,
        rng: RngStreams,
        phantom_size_bytes: float,
        intra_bdp_bytes: float,
    ) -> None:
        """Attach RED/ECN and phantom queues to switch ports per the ``switch`` config.

        Every port draws its marking decisions from a stream of its own: a port decides lazily,
        when it is next touched (:mod:`uno.net.port`), so with one stream shared by all ports
        the order in which ports are touched, which a queue sampler changes, would decide which
        port gets which number. RED and the phantom queue of one port share the port's stream:
        both decide in the port's FIFO departure order, whoever touches it."""
        if switch_cfg.ack_priority:
            for port in self.switch_ports():
                port.enable_control_lane()
        kinds = list(switch_cfg.port_kinds) if switch_cfg.port_kinds else None
        ecn = switch_cfg.ecn
        ph = switch_cfg.phantom
        if not ecn.enabled and not ph.enabled:
            return
        source = switch_cfg.mark_source
        if source == "auto":
            source = MARK_PHANTOM if ph.enabled else MARK_PHYSICAL
        for port in self.switch_ports(kinds):
            uniform = rng.buffered(f"ecn/{port.name}")
            red = None
            if ecn.enabled and ecn.k_intra_bdp_divisor is not None:
                step_k = intra_bdp_bytes / ecn.k_intra_bdp_divisor
                red = RedMarker(step_k, step_k, uniform)
            elif ecn.enabled:
                kmin_frac, kmax_frac = ecn.kmin_frac, ecn.kmax_frac
                if port.kind in ("border", "wan") and switch_cfg.border_kmin_frac is not None:
                    kmin_frac, kmax_frac = switch_cfg.border_kmin_frac, switch_cfg.border_kmax_frac
                kmin = (
                    ecn.kmin_bytes if ecn.kmin_bytes is not None else kmin_frac * port.buffer_bytes
                )
                kmax = (
                    ecn.kmax_bytes if ecn.kmax_bytes is not None else kmax_frac * port.buffer_bytes
                )
                red = RedMarker(kmin, kmax, uniform)
            phantom = None
            if ph.enabled:
                size = ph.size_bytes if ph.size_bytes is not None else phantom_size_bytes
                phantom = PhantomQueue(
                    size,
                    ph.drain_frac * port.rate_bps,
                    ph.kmin_frac * size,
                    ph.kmax_frac * size,
                    uniform,
                )
            port.set_marking(red, phantom, source)
            if phantom is not None:
                port.set_phantom_accounting(ph.count_acks, ph.count_drops)

    def marking_threshold_bytes(self, edges) -> float | None:
        """The smallest physical-queue ECN threshold (RED Kmin) among the switch ports of
        ``edges`` (routing edges, e.g. a flow's path), None if none of them marks on its
        physical queue."""
        ks = [
            port.red.kmin_bytes
            for port in (self.ports[e.edge_id] for e in edges)
            if port.marks_physical
        ]
        return min(ks) if ks else None

    def _ports_matching(self, patterns: list[str], both_directions: bool, field: str) -> list[Port]:
        import fnmatch

        from uno.core.errors import ConfigError

        chosen: dict[str, Port] = {}
        for i, pat in enumerate(patterns):
            hits = [p for p in self.ports if fnmatch.fnmatchcase(p.name, pat)]
            if not hits:
                raise ConfigError(f"{field}.ports[{i}]", f"{pat!r} matches no port")
            for p in hits:
                chosen[p.name] = p
                if both_directions:
                    a, _, rest = p.name.partition("->")
                    b, sep, idx = rest.partition("#")
                    rev = self.port_by_name.get(f"{b}->{a}{sep}{idx}")
                    if rev is not None:
                        chosen[rev.name] = rev
        return list(chosen.values())

    def configure_faults(self, faults_cfg, rng: RngStreams) -> None:
        """Attach link failures and losses (``faults`` config) to the ports they name; each
        port draws from its own ``fault/<port>`` stream."""
        from uno.core.units import us_to_ps
        from uno.faults.models import BlockLoss, IidLoss, LinkDown

        for i, lf in enumerate(faults_cfg.link_failures):
            end = us_to_ps(lf.until_us) if lf.until_us is not None else None
            for port in self._ports_matching(
                list(lf.ports), lf.both_directions, f"faults.link_failures[{i}]"
            ):
                port.attach_faults([LinkDown(us_to_ps(lf.at_us), end)])
        for i, loss in enumerate(faults_cfg.losses):
            for port in self._ports_matching(
                list(loss.ports), loss.both_directions, f"faults.losses[{i}]"
            ):
                uniform = rng.buffered(f"fault/{port.name}")
                models = []
                if loss.probability > 0:
                    models.append(IidLoss(loss.probability, uniform))
                if loss.block_probabilities:
                    models.append(
                        BlockLoss(list(loss.block_probabilities), loss.block_packets, uniform)
                    )
                if models:
                    port.attach_faults(models)

    # ---- accounting ---------------------------------------------------------------------
    def drop(self, pkt, reason: str, port: Port) -> None:
        self.dropped[(reason, KIND_NAMES[pkt.kind])] += 1
        self.in_flight -= 1

    def misrouted(self, pkt, host: Host) -> None:
        raise InvariantError(f"{pkt!r} delivered to host {host.host_id}")

    def packets_in_network(self) -> int:
        """Packets in queues or on links now, counted from what the ports hold."""
        return sum(p.packets_held() for p in self.ports)

    def check_conservation(self) -> dict:
        """Every injected packet is delivered, dropped, or still in the network. Raises if not."""
        injected = sum(self.injected)
        delivered = sum(self.delivered)
        dropped = sum(self.dropped.values())
        in_network = self.packets_in_network()
        if injected != delivered + dropped + in_network or self.in_flight != in_network:
            raise InvariantError(
                f"packet conservation broken: injected {injected} != delivered {delivered} + dropped "
                f"{dropped} + in network {in_network} (counter says {self.in_flight})"
            )
        return {
            "injected": {KIND_NAMES[k]: self.injected[k] for k in range(3)},
            "delivered": {KIND_NAMES[k]: self.delivered[k] for k in range(3)},
            "dropped": {f"{r}/{k}": n for (r, k), n in sorted(self.dropped.items())},
            "in_network": in_network,
        }

    def packet_hops(self) -> int:
        """Packets that entered a queue so far (data and control), summed over all ports."""
        return sum(p.arrivals for p in self.ports)


def _parallel(routing: Routing, e) -> bool:
    """Whether edge ``e`` has a parallel twin (same src and dst nodes)."""
    return sum(1 for x in routing.out_edges[e.src] if routing.edges[x].dst == e.dst) > 1
