"""Reliable transport: per-flow sender (window, pacing, retransmission timer) and receiver
(per-packet ACK with ECN echo, out-of-order tolerant, completion)."""
