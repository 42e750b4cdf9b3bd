"""Errors raised by uno. A :class:`ConfigError` stops a run before it starts; an
:class:`InvariantError` stops a run whose state became impossible (never printed and ignored)."""


class ConfigError(ValueError):
    """A configuration, workload or topology input is invalid. The message names the field."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.reason = message
        super().__init__(f"{field}: {message}")


class InvariantError(RuntimeError):
    """A simulation invariant broke (e.g. more bytes delivered than sent, a negative queue)."""
