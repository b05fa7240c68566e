"""What every command does the same way: read the settings in force, open an existing store,
and speak one vocabulary: the command classes (:class:`Command`, :class:`Group`) below.

Help labels (``--help`` is the reference, so it says the same thing the same way):

* a flag (``--json``, ``--dedup/--no-dedup``) shows no value label: it takes none;
* an option that takes a value shows its type, ``<int>``, ``<str>``, ``<path>``; a
  repeatable one its item's type and ``...`` (``--where <str>...``);
* an argument is named in capitals, in the usage line and in its panel (``PATHS``).

Errors: every one the user sees is one line, ``error: <message>`` on stderr, exit status 2
for a usage or settings error (an unknown option, a missing argument, a bad value) and 1
for a failure after the work began (as each command's ``--help`` says). The commands call
:func:`fissure.cli.output.fail`; the parser's own errors and any
:class:`~fissure.errors.FissureError` a command let through are printed by the root
:class:`Group` the same way, never as a traceback or a boxed ``Error`` (docs/cli.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand, TyperGroup

from fissure.cli.options import OFF_AT_ZERO, PARAM_KEYS
from fissure.cli.output import fail
from fissure.errors import FissureError

if TYPE_CHECKING:
    from fissure.settings import Resolved, Settings
    from fissure.store.manifest import ManifestProtocol
    from fissure.store.protocol import Store


def settings_for(ctx: typer.Context) -> Settings:
    """The settings a command runs with: defaults, presets, the settings file and the flags
    given (``--preset``, ``--config``, ``--no-config`` choose which); one line and exit 2 when
    they cannot work."""
    return resolved_for(ctx).settings


def resolved_for(ctx: typer.Context) -> Resolved:
    """:func:`settings_for`, with where each value came from."""
    from fissure.settings import resolve

    flags, names = {}, {}
    for param in ctx.command.params:
        key = PARAM_KEYS.get(param.name or "")
        value = ctx.params.get(param.name or "")
        if key is None or value is None:
            continue
        flags[key] = None if key in OFF_AT_ZERO and value == 0 else value
        names[key] = _spelled(param, value)
    try:
        return resolve(
            ctx.params.get("preset"),
            config=ctx.params.get("config_file"),
            use_files=not ctx.params.get("no_config"),
            flags=flags,
            flag_names=names,
        )
    except FissureError as exc:
        fail(str(exc))


def open_existing(store: str, read_only: bool = False) -> tuple[Store, ManifestProtocol]:
    """The store and the manifest that ``--store`` names; fails (one line) when there is none.
    ``read_only``: for a command that only reads, which then writes nothing there (a
    read-only mount or a full disk is searched as it is)."""
    from fissure.store.open import open_store

    try:
        return open_store(store, create=False, read_only=read_only)
    except FissureError as exc:
        fail(str(exc))


def _spelled(param: Any, value: object) -> str:
    """How the user wrote the flag: ``--max-tokens``, or ``--no-dedup`` for a false switch."""
    opts = list(getattr(param, "opts", ()))
    secondary = list(getattr(param, "secondary_opts", ()))
    if value is False and secondary:
        return secondary[0]
    return max(opts, key=len) if opts else str(param.name)


def _parser_errors() -> tuple[type[BaseException], ...]:
    """The parser's error classes: typer's own (newer typer carries its own click) and click's."""
    kinds: list[type[BaseException]] = []
    own = getattr(typer, "TyperException", None)
    if isinstance(own, type):
        kinds.append(own)
    try:
        import click

        kinds.append(click.ClickException)
    except ImportError:  # pragma: no cover - typer without click
        pass
    return tuple(kinds)


PARSER_ERRORS = _parser_errors()
_LIST = re.compile(r"<list\[(\w+)\]>")


def tidy(params: list[Any], ctx: Any) -> list[Any]:
    """``params`` with the help labels of the module docstring (set once; idempotent)."""
    for param in params:
        if param.param_type_name == "argument":
            if param.metavar is None:
                param.metavar = str(param.name).upper()
        elif getattr(param, "is_flag", False) and not getattr(param, "count", False):
            param.metavar = ""  # a flag takes no value: no "<bool>"
        elif getattr(param, "multiple", False) and param.metavar is None:
            shown = param.display_type(ctx) if hasattr(param, "display_type") else ""
            item = _LIST.fullmatch(str(shown))
            if item:
                param.metavar = f"<{item.group(1).lower()}>..."
    return params


class Command(TyperCommand):
    """A ``fissure`` command: the help labels of this module."""

    def get_params(self, ctx: Any) -> list[Any]:
        return tidy(super().get_params(ctx), ctx)


class Group(TyperGroup):
    """A ``fissure`` command group: the help labels, and (at the root) the one error path."""

    def get_params(self, ctx: Any) -> list[Any]:
        return tidy(super().get_params(ctx), ctx)

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        with one_line_errors():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        with one_line_errors():
            return super().invoke(ctx)


@contextmanager
def one_line_errors() -> Iterator[None]:
    """Print the parser's errors and stray library errors as ``error: …`` lines."""
    try:
        yield
    except PARSER_ERRORS as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # the help is printed instead
            raise
        fail(_parser_message(exc), code=int(getattr(exc, "exit_code", 2) or 2))
    except FissureError as exc:
        fail(str(exc))


def _parser_message(exc: BaseException) -> str:
    """The parser's message in the house style: lower case, no full stop, and where to
    look (``see fissure chunk --help``)."""
    formatted = getattr(exc, "format_message", None)
    message = str(formatted() if callable(formatted) else exc).strip().rstrip(".")
    if message[:2].istitle():  # "No such option" (not "'-k' …" or "URL …")
        message = message[0].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", "") if ctx is not None else ""
    return f"{message} (see {path} --help)" if path else message
