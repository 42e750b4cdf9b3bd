"""The network: hosts, switches and ports instantiated from a topology and its routing, plus
packet accounting (injected, delivered, dropped with reason, in flight)."""

from __future__ import annotations

from collections import Counter

from uno.core.errors import InvariantError
from uno.core.packet import KIND_NAMES
from uno.core.rng import RngStreams
from uno.net.host import Host
from uno.net.overflow import OVERFLOW_TRIM
from uno.net.phantom import PhantomQueue
from uno.net.port import Port
from uno.net.red import RedMarker
from uno.net.switch import Switch
from uno.scenario import PortMarking, port_names
from uno.topo.base import HOST
from uno.topo.routing import Routing


class Network:
    """Instantiated network elements of one simulation."""

    def __init__(self, engine, routing: Routing, ecmp_salts: list[int], port_cls=Port):
        """``ecmp_salts``: one per switch, in topology order (:class:`uno.scenario.Scenario`);
        ``port_cls``: the class of every port (one per routing edge, in edge order)."""
        self.engine = engine
        self.routing = routing
        topo = routing.topo
        self.injected = [0] * len(KIND_NAMES)  # by packet kind
        self.delivered = [0] * len(KIND_NAMES)
        self.dropped: Counter = Counter()  # (reason, kind name) -> packets
        self.in_flight = 0
        #: the compiled data plane (uno.net.compiled) when it carries the packets
        self.dataplane = None
        #: the DCI switches' elements (uno.net.dci), and their taps by the name of the port
        #: delivering into them
        self.dcis: list = []
        self.dci_taps: dict = {}
        self.hosts: list[Host] = []
        self.switches: dict[str, Switch] = {}
        #: the flows whose packets this network carries, by flow id (None: not one of them);
        #: filled by the builder, read by the hosts to hand a packet to its flow's endpoint
        self.flows_by_id: list = []
        salts = ecmp_salts
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
        for e, name in zip(routing.edges, port_names(routing), strict=True):
            port = port_cls(engine, self, name, e.rate_bps, e.delay_ps, e.buffer_bytes, e.kind)
            port.connect(node_objs[e.dst])
            port.owner = node_objs[e.src]
            self.ports.append(port)
            owner = node_objs[e.src]
            if isinstance(owner, Host):
                owner.attach_nic(port)
            else:
                owner.ports.append(port)
        for host in self.hosts:
            if host.nic is None:
                raise ValueError(f"host {host.name} is not connected")
        # a switch's next-hop tuples repeat across destinations: each becomes ports once
        port_tuples: dict[tuple[int, ...], tuple[Port, ...]] = {}
        ports = self.ports
        for node_index, obj in enumerate(node_objs):
            if isinstance(obj, Switch):
                fib = []
                for hops in routing.next_hops[node_index]:
                    found = port_tuples.get(hops)
                    if found is None:
                        found = port_tuples[hops] = tuple([ports[e] for e in hops])
                    fib.append(found)
                obj.set_fib(fib)
        self.port_by_name = {p.name: p for p in self.ports}

    # ---- configuration ------------------------------------------------------------------
    def switch_ports(self, kinds: list[str] | None = None) -> list[Port]:
        """Output ports owned by switches, optionally only on links of the given kinds."""
        return [
            p for p in self.ports if isinstance(p.owner, Switch) and (not kinds or p.kind in kinds)
        ]

    def configure_marking(
        self, switch_cfg, plan: list[PortMarking | None], rng: RngStreams
    ) -> None:
        """Attach RED/ECN and phantom queues to switch ports per ``plan`` (one entry per edge,
        :func:`uno.scenario.marking_plan` of the ``switch`` config).

        Every port draws its marking decisions from a stream of its own: a port decides lazily,
        when it is next touched (:mod:`uno.net.port`), so with one stream shared by all ports
        the order in which ports are touched, which a queue sampler changes, would decide which
        port gets which number. RED and the phantom queue of one port share the port's stream:
        both decide in the port's FIFO departure order, whoever touches it."""
        trimming = switch_cfg.trimming
        if switch_cfg.control_lane:
            for port in self.switch_ports():
                port.enable_control_lane()
        if trimming.enabled:
            for port in self.switch_ports():
                port.overflow_policy = OVERFLOW_TRIM
                port.trim_bytes = trimming.header_bytes
        for port, m in zip(self.ports, plan, strict=True):
            if m is None:
                continue
            uniform = rng.buffered(f"ecn/{port.name}")
            red = None
            if m.red_kmin_bytes is not None:
                red = RedMarker(m.red_kmin_bytes, m.red_kmax_bytes, uniform, m.red_pmax)
            phantom = None
            if m.phantom_size_bytes is not None:
                phantom = PhantomQueue(
                    m.phantom_size_bytes,
                    m.phantom_drain_bps,
                    m.phantom_kmin_bytes,
                    m.phantom_kmax_bytes,
                    uniform,
                )
            port.set_marking(red, phantom, m.source)
            if phantom is not None:
                port.set_phantom_accounting(m.phantom_counts_acks, m.phantom_counts_drops)

    def _ports_matching(self, patterns: list[str], both_directions: bool, field: str) -> list[Port]:
        from uno.faults.ports import ports_matching

        names = ports_matching([p.name for p in self.ports], patterns, both_directions, field)
        return [self.port_by_name[n] for n in names]

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
        return sum(p.packets_held() for p in self.ports) + sum(d.packets_held() for d in self.dcis)

    def check_conservation(self) -> dict:
        """Every injected packet is delivered, dropped, or still in the network. Raises if not."""
        if self.dataplane is not None:
            self.dataplane.sync()
            self.dataplane.check_ports()
        injected = sum(self.injected)
        delivered = sum(self.delivered)
        dropped = sum(self.dropped.values())
        in_network = self.packets_in_network()
        if self.dataplane is not None and self.dataplane.packets_in_network() != in_network:
            raise InvariantError(
                f"compiled data plane: {self.dataplane.packets_in_network()} packets in its pool, "
                f"{in_network} held by its ports"
            )
        if injected != delivered + dropped + in_network or self.in_flight != in_network:
            raise InvariantError(
                f"packet conservation broken: injected {injected} != delivered {delivered} + dropped "
                f"{dropped} + in network {in_network} (counter says {self.in_flight})"
            )
        return {
            "injected": {name: self.injected[k] for k, name in enumerate(KIND_NAMES)},
            "delivered": {name: self.delivered[k] for k, name in enumerate(KIND_NAMES)},
            "dropped": {f"{r}/{k}": n for (r, k), n in sorted(self.dropped.items())},
            "in_network": in_network,
        }

    def packet_hops(self) -> int:
        """Packets that entered a queue so far (data and control), summed over all ports."""
        return sum(p.arrivals for p in self.ports)
