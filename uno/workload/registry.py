"""Workload kind -> generator."""

from __future__ import annotations

from uno.config.parts import declare_choices
from uno.workload.allreduce import allreduce_flows
from uno.workload.explicit import explicit_flows
from uno.workload.incast import incast_flows
from uno.workload.mixed import mixed_flows
from uno.workload.permutation import permutation_flows
from uno.workload.rpc import rpc_incast_flows
from uno.workload.trace import trace_flows

WORKLOAD_REGISTRY = {
    "flows": explicit_flows,
    "incast": incast_flows,
    "permutation": permutation_flows,
    "rpc_incast": rpc_incast_flows,
    "trace": trace_flows,
    "allreduce": allreduce_flows,
    "mixed": mixed_flows,
}
declare_choices("workload.kind", WORKLOAD_REGISTRY)
