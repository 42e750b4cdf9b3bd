"""The congestion-control algorithms, each declared once, and the engines' dispatch over them.

:data:`LAW_MODULES` lists the modules under ``uno/cc/`` that define a :class:`uno.cc.law.Law`
as ``LAW``; an algorithm's kind is its place in that list (1, 2, ...), written into column
``kind`` of every flow's constants. The compiled data plane and the fluid engine call the laws
through the functions below, which :func:`_chain` generates from the list: one function per
hook whose body is a flat chain of ``if kind == k`` branches, one per law, as if written by
hand (Numba cannot call through a table of functions). Adding an algorithm is one line here.
"""

from __future__ import annotations

import importlib
import inspect

from numba import njit

from uno.cc.law import C, ack_feedback
from uno.config.parts import declare

#: the algorithms' modules (uno.cc.<name>), in kind order
LAW_MODULES = (
    "dctcp",
    "uno",
    "gemini",
    "mprdma",
    "bbr",
    "hpcc",
    "dcqcn",
    "timely",
    "gear",
    "annulus",
    "smartt",
    "powertcp",
    "mlcc",
)


def _load_laws() -> tuple:
    """The laws, in kind order; each algorithm's parameters declared to the configuration."""
    laws = []
    for name in LAW_MODULES:
        law = importlib.import_module(f"uno.cc.{name}").LAW
        if law.name != name:
            raise ValueError(f"uno.cc.{name}.LAW is named {law.name!r}")
        declare("cc", name, law.params)
        laws.append(law)
    return tuple(laws)


LAWS = _load_laws()
#: name -> law, and name -> kind
LAW_BY_NAME = {law.name: law for law in LAWS}
KIND = {law.name: k for k, law in enumerate(LAWS, start=1)}


def _chain(hook: str):
    """``f(kind, *args)`` calling ``getattr(law, hook)(*args)`` of the law of that kind: one
    function whose body is a flat chain of ``if kind == k`` branches over the hook's own
    parameters (generated source; a chain of ``*args`` closures costs a call and a tuple of
    references per law it passes)."""
    fns = [getattr(law, hook) for law in LAWS]
    params = list(inspect.signature(fns[0].py_func).parameters)
    for law, fn in zip(LAWS, fns, strict=True):
        if len(inspect.signature(fn.py_func).parameters) != len(params):
            raise ValueError(f"uno.cc.{law.name}.{hook} must take ({', '.join(params)})")
    args = ", ".join(params)
    name = f"{hook}_by_kind"
    lines = [f"def {name}(kind, {args}):"]
    for kind in range(1, len(LAWS) + 1):
        lines.append(f"    if kind == {kind}:\n        return law_{kind}({args})")
    # (unreachable for a kind the registry gave; the call gives the function its result type)
    lines.append("    if kind >= 0:\n        raise ValueError('unknown congestion-control kind')")
    lines.append(f"    return law_1({args})")
    scope = {f"law_{k}": fn for k, fn in enumerate(fns, start=1)}
    exec(compile("\n".join(lines), f"<uno.cc.registry {name}>", "exec"), scope)  # noqa: S102
    return _jit(scope[name], name)


def _jit(fn, name: str):
    """``fn`` compiled under a name of its own: Numba names a function's machine code after it,
    and two cached kernels holding different functions of one name would be linked to one of
    them when both are loaded."""
    fn.__name__ = fn.__qualname__ = name
    return njit(fn)


#: init(kind, s, p); on_feedback(kind, s, p, fb, rec); on_loss(kind, s, p, now_ps, loss);
#: on_send(kind, s, p, now_ps, wire_bytes); next_timer(kind, s, p) -> ps;
#: on_timer(kind, s, p, now_ps); on_notify(kind, s, p, now_ps, level);
#: on_report(kind, s, p, now_ps, sent_ps, rate_bps, rec); pacing_rate(kind, s, p) -> bit/s
init = _chain("init")
on_feedback = _chain("on_feedback")
on_loss = _chain("on_loss")
on_send = _chain("on_send")
next_timer = _chain("next_timer")
on_timer = _chain("on_timer")
on_notify = _chain("on_notify")
on_report = _chain("on_report")
pacing_rate = _chain("pacing_rate")


# ---- entry points for Python (cached: the chains above are compiled into them) ---------------
# Each returns the window (bytes) and pacing rate (bit/s) the law allows after the call: the
# Python data plane reads both per packet, and a call from Python costs far more than either.
@njit(cache=True)
def law_init(kind, s, p):
    init(kind, s, p)
    return s[C.cwnd], pacing_rate(kind, s, p)


@njit(cache=True)
def law_ack(kind, s, p, now_ps, acked_bytes, ecn, rtt_ps, sent_ps, inflight_bytes,
            delivered_bytes, rate_bytes, rate_interval_ps, duplicate, rec):  # fmt: skip
    """One ACK as a batch of one (:func:`uno.cc.law.ack_feedback`), INT records ``rec``."""
    fb = ack_feedback(now_ps, acked_bytes, ecn, rtt_ps, sent_ps, inflight_bytes,
                      delivered_bytes, rate_bytes, rate_interval_ps, duplicate, rec.shape[0])  # fmt: skip
    on_feedback(kind, s, p, fb, rec)
    return s[C.cwnd], pacing_rate(kind, s, p)


@njit(cache=True)
def law_loss(kind, s, p, now_ps, loss):
    on_loss(kind, s, p, float(now_ps), loss)
    return s[C.cwnd], pacing_rate(kind, s, p)


@njit(cache=True)
def law_send(kind, s, p, now_ps, wire_bytes):
    on_send(kind, s, p, float(now_ps), float(wire_bytes))
    return s[C.cwnd], pacing_rate(kind, s, p)


@njit(cache=True)
def law_next_timer(kind, s, p):
    return next_timer(kind, s, p)


@njit(cache=True)
def law_timer(kind, s, p, now_ps):
    on_timer(kind, s, p, float(now_ps))
    return s[C.cwnd], pacing_rate(kind, s, p)


@njit(cache=True)
def law_notify(kind, s, p, now_ps, level):
    on_notify(kind, s, p, float(now_ps), level)
    return s[C.cwnd], pacing_rate(kind, s, p)


@njit(cache=True)
def law_report(kind, s, p, now_ps, sent_ps, rate_bps, rec):
    on_report(kind, s, p, float(now_ps), float(sent_ps), float(rate_bps), rec)
    return s[C.cwnd], pacing_rate(kind, s, p)


@njit(cache=True)
def law_pacing_rate(kind, s, p):
    return pacing_rate(kind, s, p)


#: every algorithm's name (the config's choices)
CC_NAMES = LAW_MODULES
