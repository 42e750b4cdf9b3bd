# Hydra config tree, importable as the package ``uno.conf`` (see pyproject.toml) so that the
# configs ship with a regular install and Hydra finds them with ``pkg://uno.conf``.
