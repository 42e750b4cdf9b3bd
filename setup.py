"""The wheel's packages, found rather than listed so that none can be left out: every package
under uno/, the ``uno`` Hydra launcher (hydra_plugins/uno_launcher), and the config tree conf/
and the shipped data data/ as uno.conf and uno.data (their folders and files: package-dir and
package-data in pyproject.toml). Everything else is in
pyproject.toml; [tool.setuptools.packages.find] alone cannot name a package whose folder lies
outside the folder it searches, hence this file."""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["uno", "uno.*"]),
        "uno.conf",
        "uno.data",
        # Hydra finds launchers only under its namespace package hydra_plugins
        "hydra_plugins.uno_launcher",
    ]
)
