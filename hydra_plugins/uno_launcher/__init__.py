"""The ``uno`` launcher of Hydra multiruns (``hydra/launcher=uno``, uno-run's default)."""
