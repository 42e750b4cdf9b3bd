"""The MLCC two-datacenter topology: two leaf-spine datacenters whose DCI switches are joined by
3 ms long-distance links.

Source: MLCC (Zhao et al., "Efficient Cross-Datacenter Congestion Control with Fast Control
Loops", ICPP 2025), §4.1 "Setup", paragraph "Simulation
topology", sentences 1-6 (numbered in order):

    (S1) "The topology in the NS-3 simulation uses the same spine-leaf structure as shown in
         Fig. 1."
    (S2) "Each datacenter has two spines and four leaves."
    (S3) "The capacity of all switch-to-switch links is 100 Gbps, and the capacity of
         server-to-switch links is 25 Gbps, leading to 4 : 1 oversubscription similar to prior
         work [24]."
    (S4) "The propagation delay of server-to-switch is 1 μs, and the propagation delay of other
         links in the datacenter is 5 μs."
    (S5) "The propagation delay of long-distance links is 3 ms."
    (S6) "The buffer sizes of the switches within the datacenter and the DCI-switches are 22 MB
         and 128 MB, respectively."

and §2.1: "cross-DC traffic follows the path: from the sending server through the local egress
DCI-switch, long-distance fiber links to the remote datacenter ingress DCI-switch, and finally to
the receiving server".

What is built (defaults = the paper's values; every number is a ``topo`` field):

* Per datacenter ``spines`` (2) spine and ``leaves`` (4) leaf switches (S2), every leaf linked
  once to every spine, and one DCI switch (tier ``border``; the text always speaks of *the*
  sender-/receiver-side DCI-switch).
* Hosts per leaf: the text does not give them (Fig. 1, which does, is not in the text). We take
  ``hosts_per_leaf`` = 32 so that the 4:1 oversubscription S3 states holds at the leaf: 32 x 25
  Gb/s of hosts over 2 x 100 Gb/s of spine uplinks. (That is 128 hosts per DC; §2.2's
  experiments use at least 8 servers of one rack, and racks 1-4 / 5-8 are the two DCs.)
* Spine-to-DCI: not in the text. We link every spine to its DCI switch with ``spine_dci_links``
  (1) 100 Gb/s link ("all switch-to-switch links", S3) of 5 µs ("other links in the
  datacenter", S4): the spines are the top of the leaf-spine fabric and the §2.1 path goes
  server - ... - DCI, so inter-DC traffic goes leaf - spine - DCI. These links are kind
  ``border``.
* DCI-to-DCI: ``wan_links`` (2) long-distance links of 100 Gb/s (S3) and 3 ms (S5), kind
  ``wan``. The number is not in the text ("long-distance links", plural, in S5 and §2.1); two
  links match the 2 x 100 Gb/s the spines give the DCI switch, so the interconnect adds no
  oversubscription of its own and cross-DC congestion shows at the receiver-side DCI switch, the
  place the paper studies (§2.2 Experiment 3, §4.3).
* Delays: 1 µs host links, 5 µs fabric and spine-DCI links (S4), 3 ms WAN (S5). Intra-DC
  one-way propagation across leaves is 12 µs; cross-DC is 3 ms + 22 µs, base RTT about 6.04 ms,
  matching §2.2 ("RTT ranges from 2 to 6 milliseconds") and §4.3 (θ "the multiple of the
  RTT_C, 6 ms, 18 ms, 30 ms").
* Buffers (S6) are per switch in the paper (a shared buffer) while this simulator buffers per
  output port: every port of an intra-DC switch gets ``switch_buffer_bytes`` (22 MB) and every
  port of a DCI switch ``dci_buffer_bytes`` (128 MB), i.e. one port may hold as much as the whole
  switch, the most a shared buffer allows. MB is read as MiB: the ns-3 simulator the paper's
  baselines (DCQCN, TIMELY, HPCC, PowerTCP) come with sizes switch buffers in MiB, and §4.3's
  "12.5 Gbps x D_t = 1.5 MB" (D_t = 1 ms: 1.49 MiB, 1.56 MB) counts in MiB too.

Hosts come first in ``topo.nodes``, DC 0 then DC 1, so host ids are contiguous per datacenter.
"""

from __future__ import annotations

from uno.core.units import gbps_to_bps, us_to_ps
from uno.topo.base import HOST, SWITCH, LinkSpec, NodeSpec, Topology


def build_mlcc_two_dc(cfg) -> Topology:
    """Two MLCC leaf-spine datacenters joined at their DCI switches. Hosts 0..n-1 are DC 0."""
    n_spine, n_leaf, per_leaf = int(cfg.spines), int(cfg.leaves), int(cfg.hosts_per_leaf)
    topo = Topology(name=f"mlcc_two_dc_s{n_spine}_l{n_leaf}_h{per_leaf}")
    host_rate = gbps_to_bps(cfg.host_rate_gbps)
    rate = gbps_to_bps(cfg.fabric_rate_gbps)
    wan_rate = gbps_to_bps(cfg.wan_rate_gbps)
    host_delay = us_to_ps(cfg.host_delay_us)
    delay = us_to_ps(cfg.fabric_delay_us)
    wan_delay = us_to_ps(cfg.wan_delay_us)
    buf, dci_buf = int(cfg.switch_buffer_bytes), int(cfg.dci_buffer_bytes)
    nic = int(cfg.nic_buffer_bytes)
    for dc in range(2):  # all hosts first, DC 0 first
        for i in range(n_leaf * per_leaf):
            topo.nodes.append(NodeSpec(f"dc{dc}/h{i}", HOST, dc, "host"))
    for dc in range(2):
        topo.nodes += [NodeSpec(f"dc{dc}/leaf{i}", SWITCH, dc, "leaf") for i in range(n_leaf)]
        topo.nodes += [NodeSpec(f"dc{dc}/spine{i}", SWITCH, dc, "spine") for i in range(n_spine)]
        topo.nodes.append(NodeSpec(f"dc{dc}/dci", SWITCH, dc, "border"))
    for dc in range(2):
        for leaf in range(n_leaf):
            name = f"dc{dc}/leaf{leaf}"
            for h in range(per_leaf):
                host = f"dc{dc}/h{leaf * per_leaf + h}"
                topo.links.append(LinkSpec(host, name, host_rate, host_delay, nic, buf, "host"))
            for s in range(n_spine):
                topo.links.append(
                    LinkSpec(name, f"dc{dc}/spine{s}", rate, delay, buf, buf, "fabric")
                )
        for s in range(n_spine):
            for _ in range(int(cfg.spine_dci_links)):
                topo.links.append(
                    LinkSpec(f"dc{dc}/spine{s}", f"dc{dc}/dci", rate, delay, buf, dci_buf, "border")
                )
    for _ in range(int(cfg.wan_links)):
        topo.links.append(
            LinkSpec("dc0/dci", "dc1/dci", wan_rate, wan_delay, dci_buf, dci_buf, "wan")
        )
    return topo
