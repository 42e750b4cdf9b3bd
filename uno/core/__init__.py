"""Simulation core: event engine, seeded random streams, units, packets and errors."""
