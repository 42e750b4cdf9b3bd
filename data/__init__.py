# Data shipped with uno, importable as the package uno.data (see pyproject.toml).
