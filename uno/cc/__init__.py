"""Congestion control: one module per algorithm behind :class:`uno.cc.base.CongestionControl`."""
