"""Composing run configs from Hydra overrides, with every refusal turned into one
:class:`ConfigError` that names the field.

Used by :func:`uno.api.compose` and by ``uno-run``, which composes and checks every job of a
command (each job of a multirun sweep) before Hydra creates any folder.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import pickle
import re
from collections.abc import Sequence

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from uno.config.schema import register_configs
from uno.config.validate import check_composed
from uno.core.errors import ConfigError

CONFIG_MODULE = "uno.conf"


def is_hydra_override(text: str) -> bool:
    """Whether an override configures Hydra itself (launcher, sweep dir, ...)."""
    key = text.lstrip("+~")
    return key == "hydra" or key.startswith(("hydra.", "hydra/"))


def compose(overrides: Sequence[str] = (), config_name: str = "config") -> DictConfig:
    """Compose the run config from Hydra overrides; refuse unknown keys (even ``+key=...``)
    and report any composition error as one ConfigError naming the field."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_module

    register_configs()
    overrides = list(overrides)
    try:
        with initialize_config_module(config_module=CONFIG_MODULE, version_base=None):
            cfg = hydra_compose(config_name=config_name, overrides=overrides)
    except Exception as exc:  # Hydra and OmegaConf raise many types; all become one line
        raise explain_compose_error(exc, overrides) from None
    check_composed(cfg)
    return cfg


class Composer:
    """Composes many configs that differ only in values at about the cost of one: the config
    groups an override list selects are composed once (Hydra's defaults list and YAML files),
    and each list's value overrides (``seed=3``, ``cc.uno.qa_beta=0.5``) are then applied to a
    copy, exactly as Hydra applies them after composing the defaults. A sweep of N seeds thus
    composes once instead of N times. :meth:`compose` returns what :func:`compose` would."""

    def __init__(self, config_name: str = "config"):
        self.config_name = config_name
        self._bases: dict[tuple[str, ...], tuple[DictConfig, dict[str, str]]] = {}
        self._groups: frozenset[str] | None = None

    def compose(self, overrides: Sequence[str] = ()) -> DictConfig:
        return self.compose_with_choices(overrides)[0]

    def compose_with_choices(self, overrides: Sequence[str] = ()) -> tuple[DictConfig, dict]:
        """The config and the option chosen in each config group (Hydra's runtime choices,
        its own groups left out)."""
        from hydra._internal.config_loader_impl import ConfigLoaderImpl

        overrides = list(overrides)
        try:
            groups, values = split_overrides(overrides, self._group_exists)
            key = tuple(o.input_line for o in groups)
            if key not in self._bases:
                self._bases[key] = self._compose_base(key)
            base, choices = self._bases[key]
            cfg = copy_config(base)
            ConfigLoaderImpl._apply_overrides_to_config(values, cfg)
        except Exception as exc:  # Hydra and OmegaConf raise many types; all become one line
            raise explain_compose_error(exc, overrides) from None
        check_composed(cfg)
        return cfg, dict(choices)

    def _compose_base(self, overrides: tuple[str, ...]) -> tuple[DictConfig, dict]:
        from hydra import compose as hydra_compose
        from hydra import initialize_config_module
        from omegaconf import open_dict

        register_configs()
        with initialize_config_module(config_module=CONFIG_MODULE, version_base=None):
            cfg = hydra_compose(self.config_name, list(overrides), return_hydra_config=True)
        choices = {k: v for k, v in cfg.hydra.runtime.choices.items() if not k.startswith("hydra")}
        with open_dict(cfg):  # (as Hydra's compose does when not asked for its own config)
            del cfg["hydra"]
        return cfg, choices

    def _group_exists(self, key: str) -> bool:
        if self._groups is None:
            self._groups = config_groups()
        return key in self._groups


def copy_config(cfg: DictConfig) -> DictConfig:
    """A deep copy of ``cfg`` (flags, types and interpolations kept): a pickle round trip,
    several times faster than :func:`copy.deepcopy` on a config; a config that does not pickle
    is deep-copied."""
    try:
        return pickle.loads(pickle.dumps(cfg, protocol=pickle.HIGHEST_PROTOCOL))
    except (pickle.PicklingError, TypeError, AttributeError):
        return copy.deepcopy(cfg)


def config_groups(module: str = CONFIG_MODULE) -> frozenset[str]:
    """Every config group of the config tree (``cc``, ``topo``, ``hydra/launcher``, ...): the
    folders of ``module`` holding YAML files, and the groups registered in Hydra's
    ConfigStore."""
    import importlib.resources
    from pathlib import Path

    from hydra.core.config_store import ConfigStore

    root = Path(str(importlib.resources.files(module)))
    found = {
        d.relative_to(root).as_posix()
        for d in root.rglob("*")
        if d.is_dir() and any(d.glob("*.yaml"))
    }

    def walk(node: dict, prefix: str) -> None:
        for name, child in node.items():
            if isinstance(child, dict):
                found.add(prefix + name)
                walk(child, f"{prefix}{name}/")

    walk(ConfigStore.instance().repo, "")
    return frozenset(found)


def split_overrides(overrides: Sequence[str], group_exists) -> tuple[list, list]:
    """Hydra's parsed ``overrides`` split as Hydra splits them: those that select an option of
    a config group (``group_exists(key)``, a non-dict value) and those that set values."""
    return split_parsed(parse_overrides(overrides), group_exists)


def parse_overrides(overrides: Sequence[str]) -> list:
    """``overrides`` parsed by Hydra's parser, in their order."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return OverridesParser.create().parse_overrides(list(overrides))


def split_parsed(parsed: list, group_exists) -> tuple[list, list]:
    """:func:`split_overrides` of overrides already parsed."""
    groups, values = [], []
    for o in parsed:
        if group_exists(o.key_or_group) and not isinstance(o.value(), dict):
            groups.append(o)
        else:
            values.append(o)
    return groups, values


def expand_sweep(overrides: Sequence[str]) -> list[list[str]]:
    """The override list of every job of a multirun, in Hydra's job order (BasicSweeper)."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    try:
        parsed = parser.parse_overrides(list(overrides))
        (batch,) = BasicSweeper.split_arguments(parsed, None)
    except Exception as exc:
        raise explain_compose_error(exc, list(overrides)) from None
    return batch


# ---- error messages ---------------------------------------------------------------------

_OVERRIDE_KEY = re.compile(r"(?:Could not override|Could not append to config)\s+'([^']+)'")
_MERGING = re.compile(r"Error merging override\s+([^=\s]+)=")
_NOT_IN = re.compile(r"Key '([^']+)' not in '([^']+)'")


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0].strip() if text.strip() else ""


def _schema_fields(obj_type) -> list[str]:
    return (
        [f.name for f in dataclasses.fields(obj_type)] if dataclasses.is_dataclass(obj_type) else []
    )


def _bad_list_element(overrides: Sequence[str], key: str, element_type) -> int | None:
    """Index of the first element of list override ``key=[...]`` that ``element_type`` (a
    dataclass) refuses, or None."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    if not dataclasses.is_dataclass(element_type):
        return None
    text = next((o for o in overrides if o.lstrip("+~").split("=", 1)[0] == key), None)
    if text is None:
        return None
    try:
        value = OverridesParser.create().parse_override(text).value()
    except Exception:
        return None
    if not isinstance(value, list):
        return None
    for i, item in enumerate(value):
        try:
            OmegaConf.merge(OmegaConf.structured(element_type), item)
        except Exception:
            return i
    return None


def _type_error_text(cause: OmegaConfBaseException, full_key: str) -> str | None:
    """ "must be <what the schema accepts>, got <value>" for a value of the wrong type."""
    from uno.config.validate import accepted_text

    obj_type = getattr(cause, "object_type", None)
    if not dataclasses.is_dataclass(obj_type) or not full_key:
        return None
    leaf = full_key.rsplit(".", 1)[-1]
    spec = next((f for f in dataclasses.fields(obj_type) if f.name == leaf), None)
    if spec is None:
        return None
    accepted = accepted_text(obj_type, spec)
    value = getattr(cause, "value", None)
    if accepted is None:
        return None
    return f"must be {accepted}, got {value!r}" if value is not None else f"must be {accepted}"


def explain_compose_error(exc: BaseException, overrides: Sequence[str]) -> ConfigError:
    """One ConfigError naming the field for a Hydra/OmegaConf composition failure."""
    from hydra.errors import MissingConfigException, OverrideParseException

    if isinstance(exc, ConfigError):
        return exc
    if isinstance(exc, MissingConfigException):
        missing = exc.missing_cfg_file or ""
        group = missing.rsplit("/", 1)[0] if "/" in missing else missing
        option = missing.rsplit("/", 1)[-1]
        options = sorted(o for o in (exc.options or []) if not o.endswith("_schema"))
        hint = difflib.get_close_matches(option, options, n=1)
        did = f"did you mean {hint[0]!r}? " if hint else ""
        if options:
            return ConfigError(
                group or "config", f"no option {option!r}; {did}options are {options}"
            )
        return ConfigError(group or "config", _first_line(str(exc)))
    if isinstance(exc, OverrideParseException):
        bad = next((o for o in overrides if "=" not in o or o.count("=") > 1), None)
        where = f"override {bad!r}" if bad else "overrides"
        return ConfigError(where, f"cannot be parsed: {_first_line(str(exc))}")
    text = str(exc)
    m = _OVERRIDE_KEY.search(text) or _MERGING.search(text)
    override_key = m.group(1).lstrip("+~") if m else None
    cause = exc
    while cause is not None and not isinstance(cause, OmegaConfBaseException):
        cause = cause.__cause__ or cause.__context__
    if cause is not None:
        full_key = getattr(cause, "full_key", None) or ""
        message = _first_line(str(cause))
        unknown = _NOT_IN.search(message)
        if unknown:
            key = unknown.group(1)
            known = _schema_fields(getattr(cause, "object_type", None))
            close = difflib.get_close_matches(key, known, n=1)
            did = f"did you mean {close[0]!r}? " if close else ""
            message = f"unknown key {key!r}; {did}keys here are {known}" if known else message
        else:
            message = _type_error_text(cause, full_key) or message
        field = full_key
        if override_key and not full_key.startswith(override_key):
            index = _bad_list_element(overrides, override_key, getattr(cause, "object_type", None))
            if index is not None and full_key:
                field = f"{override_key}[{index}].{full_key}"
            else:
                field = f"{override_key} ({full_key})" if full_key else override_key
        return ConfigError(field or override_key or "config", message)
    return ConfigError(override_key or "config", _first_line(text) or type(exc).__name__)


def resolved_container(cfg) -> dict:
    """The resolved config as plain containers (dict/list/scalars), from a DictConfig or the
    run-config dataclass."""
    node = cfg if isinstance(cfg, DictConfig) else OmegaConf.structured(cfg)
    return OmegaConf.to_container(node, resolve=True)
