"""Workloads: pure functions from a config, host facts and a seeded generator to flow specs."""
