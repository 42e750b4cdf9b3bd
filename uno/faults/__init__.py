"""Faults: failed links, random and correlated packet loss (Uno paper §2.4 Table 1, §5.2.3)."""
