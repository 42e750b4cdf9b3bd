"""Structured configuration (Hydra ConfigStore schemas) and validation."""
