"""One validator for every config field, driven by the schema.

:func:`check_composed` looks at the composed (Hydra) config: keys the schema does not know,
including ones added with Hydra's ``+`` prefix, and mandatory values left unset.
:func:`check_fields` walks the resolved dataclasses: every field is checked against the rule it
declares (:mod:`uno.config.fields`), numbers must be finite and fit the engine's integer units,
and a dataclass may add cross-field rules in a ``check_consistency(prefix)`` method.
:func:`check_config` adds the rules across groups: the run name (:func:`check_run_name`) and a
network that can deliver a packet before the run stops (:func:`check_deliverable`). Checks that
need the built topology (host ids, port names, link kinds) are in :func:`check_against_topology`
and the workload generators. Each failure raises one :class:`ConfigError` naming the field, the
value and what is accepted, before anything runs or is written.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from functools import cache
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

from uno.config.fields import ENGINE_LIMIT, INT_LIMIT, Rule, unit_of
from uno.core.errors import ConfigError

# ---- the composed config ----------------------------------------------------------------


def check_composed(cfg: DictConfig) -> None:
    """Refuse keys the schema does not declare and mandatory values that are unset (one walk
    over the config: it runs for every job of a sweep)."""
    missing: list[str] = []
    _walk(cfg, "", missing)
    if missing:
        raise ConfigError(sorted(missing)[0], "is required but not set")


def _join(prefix: str, key: Any) -> str:
    return f"{prefix}.{key}" if prefix else str(key)


def _walk(node: Any, prefix: str, missing: list[str]) -> None:
    """Check the keys under ``node`` against its schema; collect the unset mandatory values."""
    if isinstance(node, ListConfig):
        if node._is_missing():
            missing.append(prefix)
            return
        if node._is_none():
            return
        for i in range(len(node)):
            _walk(node._get_node(i), f"{prefix}[{i}]", missing)
        return
    if not isinstance(node, DictConfig):
        if node._is_missing():
            missing.append(prefix)
        return
    if node._is_missing():
        missing.append(prefix)
        return
    if node._is_none():
        return
    keys = list(node.keys())
    schema = OmegaConf.get_type(node)
    if dataclasses.is_dataclass(schema):
        known = _field_names(schema)
        for key in keys:
            if key not in known:
                raise ConfigError(_join(prefix, key), _unknown_key_text(str(key), list(known),
                                                                        prefix))  # fmt: skip
    for key in keys:
        _walk(node._get_node(key), _join(prefix, key), missing)


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _unknown_key_text(key: str, known: list[str], prefix: str) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean {_join(prefix, close[0])!r}? " if close else ""
    where = f"under {prefix!r}" if prefix else "at the top level"
    return f"unknown key; {hint}keys {where} are {known}"


# ---- the resolved dataclasses ----------------------------------------------------------


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _unwrap(tp: Any) -> tuple[Any, bool]:
    """(type without Optional, whether None is allowed)."""
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        return (rest[0] if len(rest) == 1 else Any), len(rest) < len(args)
    return tp, False


def _fmt(value: Any) -> str:
    if isinstance(value, int) and abs(value) >= 10**16:
        return f"{float(value):.3e}"
    return repr(value)


def _accepted(base: type, rule: Rule | None, nullable: bool) -> str:
    what = "an integer" if base is int else "a finite number"
    text = f"{what} {rule.text}" if rule is not None else what
    return text + (" (or null)" if nullable else "")


def check_number(path: str, value: Any, base: type, rule: Rule | None, nullable: bool) -> None:
    """Type, finiteness, magnitude, unit range and the declared rule of one numeric value."""
    accepted = _accepted(base, rule, nullable)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(path, f"must be {accepted}, got {value!r}")
    if base is int and not isinstance(value, int):
        raise ConfigError(path, f"must be {accepted}, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(path, f"must be {accepted}, got {value!r}")
    if rule is not None and not rule.accepts(value):
        raise ConfigError(path, f"must be {accepted}, got {_fmt(value)}")
    limit, why = float(INT_LIMIT), "2**53"
    unit = unit_of(path.rsplit(".", 1)[-1])
    if unit is not None and ENGINE_LIMIT / unit[0] < limit:
        limit, why = ENGINE_LIMIT / unit[0], f"2**62 {unit[1]} in the engine"
    if abs(value) > limit:
        raise ConfigError(
            path, f"must be {accepted} and at most {limit:.4g} ({why}), got {_fmt(value)}"
        )
    if unit is not None and value != 0 and abs(value) * unit[0] < 1:
        # the engine counts in whole units: a positive time below 1 ps would become 0 ps
        # (sampling every 0 ps: off), a rate below 1 bit/s 0 bit/s
        zero = "0 or " if rule is None or rule.accepts(0) else ""
        raise ConfigError(
            path,
            f"must be {zero}at least {1 / unit[0]:g} (1 {unit[1]} in the engine; a smaller value "
            f"rounds to 0), got {_fmt(value)}",
        )


def accepted_text(cls: type, spec: dataclasses.Field) -> str | None:
    """What field ``spec`` of dataclass ``cls`` accepts, in words (None if unknown)."""
    base, nullable = _unwrap(_hints(cls)[spec.name])
    if base in (int, float):
        return _accepted(base, spec.metadata.get("rule"), nullable)
    if base is bool:
        return "true or false"
    if "choices" in spec.metadata:
        choices = spec.metadata["choices"]
        return f"one of {sorted(choices() if callable(choices) else choices)}"
    if typing.get_origin(base) is list:
        return "a list, e.g. [a,b]"
    return None


def _check_choice(path: str, value: Any, choices: Any, nullable: bool) -> None:
    allowed = sorted(choices() if callable(choices) else choices)
    if value not in allowed:
        extra = " (or null)" if nullable else ""
        raise ConfigError(path, f"must be one of {allowed}{extra}, got {value!r}")


def check_fields(node: Any, prefix: str = "") -> None:
    """Check every field of dataclass ``node`` (recursively) against the schema's rules."""
    hints = _hints(type(node))
    for f in dataclasses.fields(node):
        path = _join(prefix, f.name)
        value = getattr(node, f.name)
        base, nullable = _unwrap(hints[f.name])
        if value is None:
            if nullable:
                continue
            raise ConfigError(path, "must be set, got null")
        if dataclasses.is_dataclass(value):
            check_fields(value, path)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if dataclasses.is_dataclass(item):
                    check_fields(item, f"{path}[{i}]")
        elif base in (int, float):
            check_number(path, value, base, f.metadata.get("rule"), nullable)
        elif base is bool and not isinstance(value, bool):
            raise ConfigError(path, f"must be true or false, got {value!r}")
        elif "choices" in f.metadata:
            _check_choice(path, value, f.metadata["choices"], nullable)
    consistency = getattr(node, "check_consistency", None)
    if consistency is not None:
        consistency(prefix)


def check_config(cfg) -> None:
    """All checks that need only the (resolved) config."""
    check_fields(cfg)
    check_run_name(cfg.name)
    check_deliverable(cfg)


# ---- cross-field checks -----------------------------------------------------------------

#: the longest run name: one folder name (at most 255 bytes on common file systems)
MAX_NAME_BYTES = 200


def check_run_name(name: str) -> None:
    """``name`` is the folder the run's results go in under ``results/``: one plain path
    component, so that results stay there (``out_dir`` says where else to write)."""
    problem = None
    if not name:
        problem = "must not be empty"
    elif "/" in name or "\\" in name:
        problem = "must be one folder name, without '/' or '\\'"
    elif name.startswith(".") or ".." in name:
        problem = "must not start with '.' or contain '..'"
    elif any(ord(c) < 32 or ord(c) == 127 for c in name):
        problem = "must not contain control characters"
    elif len(name.encode()) > MAX_NAME_BYTES:
        problem = f"must be at most {MAX_NAME_BYTES} bytes long"
    if problem:
        raise ConfigError(
            "name",
            f"{problem} (it names the run's folder under results/; out_dir=DIR writes "
            f"elsewhere), got {name!r}",
        )


def packet_bytes(cfg) -> tuple[int, int]:
    """Wire bytes of a full data packet and of an ACK (INT records included when on)."""
    tp = cfg.transport
    extra = cfg.switch.int_telemetry.overhead_bytes()
    return tp.mtu_bytes + tp.header_bytes + extra, tp.ack_bytes + extra


def check_deliverable(cfg) -> None:
    """Refuse a network that cannot deliver a packet before the run stops: a port buffer (any
    ``*buffer_bytes`` field of the topology) smaller than one full data packet or ACK, a link
    (any ``*_rate_gbps`` field) too slow to carry one data packet within
    ``engine.max_sim_time_ms``, or a workload whose flows all start after it."""
    from uno.core.units import gbps_to_bps, ms_to_ps, serialization_ps, us_to_ps

    data_bytes, ack_bytes = packet_bytes(cfg)
    topo = cfg.topo
    values = {f.name: getattr(topo, f.name) for f in dataclasses.fields(topo)}
    buffers = {k: v for k, v in values.items() if k.endswith("buffer_bytes") and v is not None}
    if buffers:
        name, smallest = min(buffers.items(), key=lambda kv: kv[1])
        _check_buffer(f"topo.{name}", smallest, cfg.transport, data_bytes, ack_bytes)
    stop_ps = ms_to_ps(cfg.engine.max_sim_time_ms)
    for name, value in values.items():
        if not name.endswith("_rate_gbps") or value is None:
            continue
        bps = gbps_to_bps(value)
        if bps < 1 or serialization_ps(data_bytes, bps) > stop_ps:
            need_gbps = data_bytes * 8 / (stop_ps / 1e12) / 1e9
            raise ConfigError(
                f"topo.{name}",
                f"must be at least {need_gbps:.3g} so that one data packet ({data_bytes} B) "
                f"crosses the link within engine.max_sim_time_ms "
                f"({cfg.engine.max_sim_time_ms:g} ms), got {_fmt(value)}",
            )
    first = _first_start(cfg.workload)
    if first is not None and us_to_ps(first[1]) >= stop_ps:
        raise ConfigError(
            first[0],
            f"must be before engine.max_sim_time_ms ({cfg.engine.max_sim_time_ms:g} ms): no "
            f"flow would start before the run stops, got {_fmt(first[1])}",
        )


def _check_buffer(field: str, buffer_bytes: int, tp, data_bytes: int, ack_bytes: int) -> None:
    """The smallest port buffer, ``field``, must hold a full data packet and an ACK (the message
    names the packet size field too: a smaller MTU is the other way out)."""
    if buffer_bytes >= max(data_bytes, ack_bytes):
        return
    if data_bytes >= ack_bytes:
        packet = (
            f"one full data packet (transport.mtu_bytes={tp.mtu_bytes} + "
            f"{data_bytes - tp.mtu_bytes} B of headers; or make the MTU smaller)"
        )
    else:
        packet = f"one ACK (transport.ack_bytes={tp.ack_bytes} and INT records)"
    raise ConfigError(
        field,
        f"must be at least {max(data_bytes, ack_bytes)}, {packet}: no packet could pass such a "
        f"port, got {buffer_bytes}",
    )


def _first_start(wl) -> tuple[str, float] | None:
    """(field, µs) of the earliest start time a flow of workload ``wl`` may have, when the
    config says it (a trace file's times are its own)."""
    if wl.kind == "flows":
        if not wl.flows:
            return None
        i = min(range(len(wl.flows)), key=lambda k: wl.flows[k].start_us)
        return f"workload.flows[{i}].start_us", wl.flows[i].start_us
    if wl.kind == "rpc_incast":
        starts = []
        if wl.n_intra + wl.n_inter > 0:
            starts.append(("workload.start_us", wl.start_us))
        if wl.rpc_count > 0:
            starts.append(("workload.rpc_start_us", wl.rpc_start_us))
        return min(starts, key=lambda s: s[1]) if starts else None
    start = getattr(wl, "start_us", None)
    return ("workload.start_us", start) if start is not None else None


# ---- checks against the built topology --------------------------------------------------

#: link kinds the topology builders produce
LINK_KINDS = ("host", "fabric", "border", "wan", "bottleneck")

#: queue-port selectors that are not port-name patterns
QUEUE_PORT_KEYWORDS = ("receivers", "busy", "all")


def check_against_topology(cfg, link_kinds: set[str]) -> None:
    """Checks that need the built topology."""
    for field, kinds in (
        ("switch.port_kinds", list(cfg.switch.port_kinds)),
        ("switch.pfc.port_kinds", list(cfg.switch.pfc.port_kinds)),
        ("switch.int_telemetry.port_kinds", list(cfg.switch.int_telemetry.port_kinds)),
        ("switch.qcn.port_kinds", list(cfg.switch.qcn.port_kinds)),
    ):
        unknown = [k for k in kinds if k not in LINK_KINDS]
        if unknown:
            raise ConfigError(
                field, f"unknown link kinds {unknown}; link kinds are {list(LINK_KINDS)}"
            )
        if kinds and not set(kinds) & link_kinds:
            raise ConfigError(
                field, f"none of {kinds} exists in this topology, which has {sorted(link_kinds)}"
            )


def check_queue_ports(selectors: list[str], port_names: list[str]) -> None:
    """Every selector of ``engine.queue_ports`` is a keyword or matches at least one port."""
    import fnmatch

    for i, sel in enumerate(selectors):
        if sel in QUEUE_PORT_KEYWORDS:
            continue
        if not any(fnmatch.fnmatchcase(name, sel) for name in port_names):
            examples = ", ".join(port_names[:3])
            raise ConfigError(
                f"engine.queue_ports[{i}]",
                f"{sel!r} matches no port; give one of {list(QUEUE_PORT_KEYWORDS)} or a glob "
                f"pattern of port names (e.g. {examples}, ...)",
            )
