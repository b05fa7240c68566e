"""Settings files and presets: one typed :class:`Settings` for every command and the API.

``fissure.toml`` (or ``[tool.fissure]`` in ``pyproject.toml``), found from the working folder
upward, sets any key of any section; ``[presets.NAME]`` tables and the built-in presets
(``fast``, ``chroma-best``) name whole recipes. :func:`load_settings` gives the settings
the command line would use; ``fissure config show`` prints them with where each came from.
See ``docs/settings.md``.
"""

from fissure.settings.files import FILENAME, ConfigFile, find_config, read_config
from fissure.settings.layers import Resolved, load_settings, resolve
from fissure.settings.model import (
    DEFAULT_STORE,
    SECTIONS,
    IngestSettings,
    QuerySettings,
    Settings,
    SourceSettings,
    StoreSettings,
)
from fissure.settings.presets import DEFAULT_PRESET, PRESETS

__all__ = [
    "DEFAULT_PRESET",
    "DEFAULT_STORE",
    "FILENAME",
    "PRESETS",
    "SECTIONS",
    "ConfigFile",
    "IngestSettings",
    "QuerySettings",
    "Resolved",
    "Settings",
    "SourceSettings",
    "StoreSettings",
    "find_config",
    "load_settings",
    "read_config",
    "resolve",
]
