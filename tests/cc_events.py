"""Random event sequences for the congestion-control laws' tests, and a driver that feeds them
to a controller the way the Python sender does (``uno.transport.sender.Sender``).

An event is a tuple: ``("ack", now, acked, ecn, rtt, sent, inflight, delivered, rate_bytes,
rate_ps, duplicate, hops)``, ``("timeout", now)``, ``("nack", now)``, ``("send", now, wire)``,
``("timer", now)`` or, for the laws that hear switches' notices, ``("notify", now, level)``, and
for those that hear DCI switches' reports, ``("report", now, sent, rate_bps, hops)``. :data:`VARIANTS` names each algorithm with the parameter sets its presets
select; :func:`trajectory` runs one sequence and returns the window, pacing rate and next timer
after every event.
"""

from __future__ import annotations

from importlib import import_module

import numpy as np

from uno.cc.base import FlowContext

SEED = 20261128
TRIALS = 6
EVENTS = 300


def context(rtt_ps: int, mss_bytes: int = 4160) -> FlowContext:
    """A flow's facts on a 100 Gb/s path of base RTT ``rtt_ps`` (the intra-DC one 2 us)."""
    return FlowContext(
        base_rtt_ps=rtt_ps,
        bdp_bytes=rtt_ps * 100e9 / 8e12,
        bottleneck_bps=100_000_000_000,
        mss_bytes=mss_bytes,
        intra_rtt_ps=2_000_000,
        intra_bdp_bytes=25_000.0,
        is_inter_dc=rtt_ps > 20_000_000,
        rto_ps=4 * rtt_ps,
        ecn_k_bytes=250_000.0,
    )


def _params(algo: str, **kw):
    from importlib import import_module

    mod = import_module(f"uno.cc.{algo}")
    cls = next(
        v
        for k, v in vars(mod).items()
        if k.endswith("Params") and isinstance(v, type) and v.__module__ == mod.__name__
    )
    return cls(**kw)


#: variant -> (algorithm, parameter overrides): the defaults and what the presets select
VARIANTS = {
    "dctcp": ("dctcp", {}),
    "dctcp_g_cap_paced": ("dctcp", {"g": 0.3, "max_cwnd_bdp": 1.5, "pacing": True}),
    "uno": ("uno", {}),
    "uno_artifact": ("uno", {
        "k_bytes": 24576, "ecn_ewma_gain": 0.65, "gentle_factor": 0.35,
        "gentle_compounds": False, "gentle_qdelay_us": 0.0, "gentle_qdelay_base_rtt_frac": 0.055,
        "qa_period_base_rtt": 1.05, "qa_window_scale": 0.96, "ewma_fall_increase": True,
    }),
    "uno_intra_rtt_timeout": ("uno", {"epoch_period": "intra_rtt", "timeout_cwnd_mss": 1.0,
                                      "max_cwnd_bdp": 0.0}),
    "gemini": ("gemini", {}),
    "gemini_artifact": ("gemini", {
        "h_bytes_per_rtt": 5376.12, "beta": 0.1, "t_us": 100.0, "k_source": "rule",
        "k_bytes": 24576, "g": 0.5, "alpha_init": 0.0, "delay_signal_intra": False,
        "max_cwnd_bdp": 1.0, "slow_start_exit_on_cut": False, "timeout_holdoff": "rto",
        "alpha_update": "base_rtt",
    }),
    "mprdma": ("mprdma", {}),
    "mprdma_artifact": ("mprdma", {"ecn_decrease_mss": 0.15, "update_on_duplicate_ack": True}),
    "mprdma_timeout_reset": ("mprdma", {"timeout_resets_cwnd": True, "max_cwnd_bdp": 0.0}),
    "bbr": ("bbr", {}),
    "bbr_artifact": ("bbr", {
        "high_gain": 2.89, "probe_rtt": False, "phase_inflight_checks": False,
        "max_cwnd_bdp": 1.0, "cwnd_cut_to_target": False, "min_pipe_cwnd_mss": 1.0,
    }),
    "bbr_short_rtprop": ("bbr", {"min_rtt_window_s": 0.002, "probe_rtt_duration_s": 0.0005,
                                 "seed_rtprop_base_rtt": False, "bw_window_rounds": 3}),
    "hpcc": ("hpcc", {}),
    "hpcc_stage0_timeout": ("hpcc", {"max_stage": 0, "timeout_cwnd_mss": 2.0}),
    "dcqcn": ("dcqcn", {}),
    "dcqcn_hpcc": ("dcqcn", {
        "alpha_timer_us": 1.0, "rate_increase_timer_us": 300.0,
        "byte_counter_bytes": 10_000_000_000, "fast_recovery_stages": 1, "rate_ai_mbps": 20.0,
        "min_rate_mbps": 1000.0, "clamp_target_rate": False, "cnp_interval_us": 4.0,
    }),
    "dcqcn_first_cnp_loss": ("dcqcn", {"rate_on_first_cnp": 0.5, "loss_as_cnp": True,
                                       "byte_counter_bytes": 40_000, "max_cwnd_bdp": 1.5}),
    "dctcp_inter_ai": ("dctcp", {"inter_ai_ratio_max": 500.0}),
    "gemini_f_min": ("gemini", {"f_min": 0.05, "h_coeff": 3e-7, "h_min_mss": 1e-9,
                                "h_max_mss": 1e9}),
    "gear": ("gear", {}),
    "gear_options": ("gear", {"classify": "path", "correct_per_ack": True,
                              "accumulate_cross_ai": True, "max_stage": 0, "utilization_rtt": "own"}),
    "gear_ablations": ("gear", {"intra_logic": "hpcc", "cross_logic": "hpcc", "k_unit": "us"}),
    "annulus": ("annulus", {}),
    "annulus_options": ("annulus", {"cross_dc_ecn": False, "inter_ai_ratio_max": None,
                                    "vegas_alpha": 2.0, "vegas_beta": 4.0, "gd": 0.01}),
    "smartt": ("smartt", {}),
    "smartt_htsim_per_ack": ("smartt", {"wtd_threshold": 0.3, "apply_every_mss": 0.0,
                                        "quick_adapt": False, "pacing": True}),
    "mlcc": ("mlcc", {}),
    "powertcp": ("powertcp", {}),
    "powertcp_timeout": ("powertcp", {"timeout_cwnd_mss": 2.0, "gamma": 1.0,
                                      "expected_flows": 100, "init_power": 0.0}),
}  # fmt: skip


def variant_params(name: str):
    """(algorithm, parameters) of a variant; an algorithm's own name with no variant of that
    name means its defaults."""
    algo, kw = VARIANTS.get(name, (name, {}))
    return algo, _params(algo, **kw)


def events(rng: np.random.Generator, rtt: int, n: int = EVENTS) -> list[tuple]:
    """``n`` random events on a path of base RTT ``rtt``: ACKs (marked or not, RTT samples with
    and without queueing, sent before or after rounds' starts, some duplicates, INT records on
    a path of 3-5 hops that changes now and then), timeouts, fast-retransmit losses, sends and
    timer wakes, at gaps from 0 to several RTTs (exactly one RTT or a quarter too: hold-offs'
    boundaries)."""
    out = []
    now = 0
    delivered = 0
    tx = [0] * 6
    n_hops = int(rng.integers(3, 6))
    for _ in range(n):
        now += int(rng.choice([int(rng.integers(0, rtt // 2)), rtt, rtt // 4, 0,
                               int(rng.integers(0, 4 * rtt))], p=[0.55, 0.1, 0.1, 0.15, 0.1]))  # fmt: skip
        op = rng.random()
        if op < 0.75:
            acked = int(rng.choice([64, 4160]))
            ecn = bool(rng.random() < 0.3)
            rtt_sample = rtt + int(rng.choice([0, 0, int(rng.integers(0, 3 * rtt))]))
            sent = now - rtt_sample
            duplicate = bool(rng.random() < 0.05)
            if not duplicate:
                delivered += acked
            inflight = int(rng.integers(0, 40)) * 4160
            rate_ps = int(rng.integers(rtt // 2, 2 * rtt))
            rate_bytes = int(rng.integers(0, 2 * rate_ps * 100e9 / 8e12))
            if rng.random() < 0.05:
                n_hops = int(rng.integers(3, 6))
            hops = []
            if rng.random() > 0.05:
                for h in range(n_hops):
                    tx[h] += int(rng.integers(0, 800_000))
                    ts = now - (n_hops - h) * 1_000_000 - (0 if rng.random() < 0.05 else 1)
                    hops.append((ts, int(rng.integers(0, 2_000_000)), tx[h], 100_000_000_000))
            out.append(("ack", now, acked, ecn, rtt_sample, sent, inflight, delivered,
                        rate_bytes, rate_ps, duplicate, tuple(hops)))  # fmt: skip
        elif op < 0.8:
            out.append(("timeout", now))
        elif op < 0.85:
            out.append(("nack", now))
        elif op < 0.95:
            out.append(("send", now, int(rng.choice([4160, 1064]))))
        else:
            out.append(("timer", now))
    return out


def sequences(variant: str):
    """(context, events) of each trial of ``variant``: the same for every implementation."""
    rng = np.random.default_rng([SEED, sum(map(ord, variant))])
    # switches' congestion notices, for the laws that hear them, from a stream of their own
    # (the other laws' sequences stay as recorded)
    algo, _ = variant_params(variant)
    notices = np.random.default_rng([SEED, 1, sum(map(ord, variant))])
    signals = import_module("uno.cc.registry").LAW_BY_NAME[algo].signals
    reports = np.random.default_rng([SEED, 2, sum(map(ord, variant))])
    for _ in range(TRIALS):
        rtt = int(rng.integers(2_000_000, 200_000_000))
        evs = events(rng, rtt)
        if "qcn" in signals:
            evs = _with_notices(notices, evs)
        if "dci" in signals:
            evs = _with_reports(reports, evs)
        yield context(rtt), evs


def _with_reports(rng: np.random.Generator, evs: list[tuple]) -> list[tuple]:
    """``evs`` with a DCI switch's report after about one event in four, at that event's
    time: a Switch-INT of the latest ACK's records (two in three) or a suggested rate."""
    out = []
    hops = ()
    for ev in evs:
        out.append(ev)
        if ev[0] == "ack":
            hops = ev[11]
        if rng.random() < 0.25:
            if hops and rng.random() < 2 / 3:
                out.append(("report", ev[1], ev[1] - int(rng.integers(0, 5_000_000)), 0.0, hops))
            else:
                out.append(("report", ev[1], ev[1], float(rng.integers(1, 120)) * 1e9, ()))
    return out


def _with_notices(rng: np.random.Generator, evs: list[tuple]) -> list[tuple]:
    """``evs`` with a congestion notice of a random level (1..63) after about one event in
    eight, at that event's time."""
    out = []
    for ev in evs:
        out.append(ev)
        if rng.random() < 0.125:
            out.append(("notify", ev[1], int(rng.integers(1, 64))))
    return out


def feed(cc, event: tuple) -> None:
    """Event ``event`` to controller ``cc``, as the Python sender calls it."""
    kind, now = event[0], event[1]
    if kind == "ack":
        _, now, acked, ecn, rtt, sent, inflight, delivered, rate_bytes, rate_ps, dup, hops = event
        if dup:
            if cc.wants_duplicate_acks:
                cc.on_duplicate_ack(now, acked, ecn, rtt, sent)
            return
        if hasattr(cc, "on_ack_batch"):
            cc.on_ack_batch(now, acked, ecn, rtt, sent, inflight, delivered, rate_bytes, rate_ps,
                            False, hops if cc.wants_int else ())  # fmt: skip
            return
        if cc.wants_int:
            cc.on_ack_int(now, acked, ecn, rtt, sent, hops)
        else:
            cc.on_ack(now, acked, ecn, rtt, sent)
        if cc.wants_rate_samples:
            cc.on_rate_sample(now, rate_bytes, rate_ps, rtt, inflight)
    elif kind == "timeout":
        cc.on_timeout(now)
    elif kind == "nack":
        cc.on_nack(now)
    elif kind == "send":
        if cc.wants_send_events:
            cc.on_send(now, event[2])
    elif kind == "notify":
        cc.on_notify(now, event[2])
    elif kind == "report":
        cc.on_report(now, event[2], event[3], event[4])
    else:
        cc.advance(now)


def trajectory(cc, evs: list[tuple]) -> np.ndarray:
    """(window, pacing rate, next timer or -1) after every event."""
    out = np.empty((len(evs), 3))
    for i, ev in enumerate(evs):
        feed(cc, ev)
        due = cc.next_rate_change_ps()
        out[i] = (cc.cwnd_bytes, cc.pacing_rate_bps, -1.0 if due is None else due)
    return out
