"""``fissure tune``: choose settings on your own questions, held out, and save them as a preset."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fissure.cli.options import json_option
from fissure.cli.output import fail, print_json
from fissure.errors import FissureError
from fissure.settings.model import EVAL_CACHE

if TYPE_CHECKING:
    from rich.console import Console

    from fissure.eval.dataset import Dataset
    from fissure.plan.tune import Tuned

GENERATED = Path("fissure-questions.csv")
NO_QUESTIONS = (
    "{path}: no questions to tune on. Give --questions FILE, a CSV in Chroma's format "
    "(columns question, references, corpus_id; references a JSON list of quoted answers, "
    'e.g. [{{"content": "the exact sentence"}}]), or let a model write them: --generate 100 '
    "--endpoint http://localhost:8000/v1 --model NAME (any OpenAI-compatible server; docs/tune.md)"
)


def tune(
    path: Annotated[Path, typer.Argument(help="The corpus folder (or a Chroma dataset folder).")],
    questions: Annotated[
        Path | None,
        typer.Option(
            help="Questions in Chroma's CSV format (default: a Chroma dataset "
            "folder's questions_df.csv); with --generate, where they are written "
            f"(default {GENERATED})."
        ),
    ] = None,
    grid: Annotated[
        list[str] | None,
        typer.Option(
            help="Repeatable: a grid (small), a preset (chroma-best, fast, or the "
            "settings file's) or a spec that maps to settings, e.g. "
            "structural:200+min=60 (docs/tune.md)."
        ),
    ] = None,
    embedder: Annotated[
        str, typer.Option(help="minilm | minilm:bf16 | minilm:onnx | static | hashing")
    ] = "minilm",
    k: Annotated[int, typer.Option("--k", "-k", help="Chunks retrieved per question.")] = 5,
    metric: Annotated[str, typer.Option(help="What decides: recall or iou (at k).")] = "recall",
    choose_on: Annotated[
        str, typer.Option(help="The half that chooses: even or odd rows; the other is reported.")
    ] = "even",
    preset_name: Annotated[str, typer.Option(help="The preset the winner is saved as.")] = "tuned",
    write: Annotated[bool, typer.Option(help="Save the winner into the settings file.")] = True,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="Write into this file (default: the fissure.toml in "
            "force from the working folder, else a new ./fissure.toml).",
        ),
    ] = None,
    generate: Annotated[
        int | None, typer.Option(help="Ask --endpoint for this many questions first.")
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option(help="An OpenAI-compatible API root, e.g. http://localhost:8000/v1."),
    ] = None,
    model: Annotated[str | None, typer.Option(help="The chat model --endpoint serves.")] = None,
    api_key_env: Annotated[
        str, typer.Option(help="Environment variable with the endpoint's key (unset: none sent).")
    ] = "OPENAI_API_KEY",
    seed: Annotated[int, typer.Option(help="Which passages --generate asks about.")] = 0,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Embedding cache (the evaluator's).")
    ] = EVAL_CACHE,
    as_json: Annotated[
        bool,
        json_option(
            "Print one JSON object: the candidates with their figures on both halves, the "
            "winner, the held-out figures, notes, preset_name and the file written; "
            "progress and notes go to stderr."
        ),
    ] = False,
) -> None:
    """Run the evaluator over a small grid of settings on your corpus and questions, choose
    on one half of the questions, report the other, and save the winner as a preset.

    Every candidate maps one for one to settings; the figures are the evaluator's,
    `python -m fissure.eval PATH -s SPEC --questions even|odd`, computed by the same code.

    Exit status: 0 tuned, 2 an error (no questions, a bad option, an endpoint that failed).
    """
    from rich.console import Console

    from fissure.plan.questions import corpus_root
    from fissure.plan.tune import check_options
    from fissure.plan.tune import grid as make_grid
    from fissure.plan.tune import tune as run
    from fissure.settings.files import shown

    console = Console(stderr=as_json, highlight=False)
    try:
        check_options(metric, choose_on, k)  # before questions are generated, at a cost
        specs = make_grid(grid or ["small"])
        dataset, notes, chroma = _questions(path, questions, generate, endpoint, model, api_key_env,
                                    seed)  # fmt: skip
        for note in notes:
            console.print(note, markup=False, soft_wrap=True)
        tuned = run(dataset, specs, embedder=embedder, k=k, metric=metric, choose_on=choose_on,
                    cache_dir=cache_dir, console=console)  # fmt: skip
        written = _save(tuned, preset_name, config) if write else None
    except FissureError as exc:
        fail(str(exc))
    if as_json:
        print_json({**tuned.to_dict(), "notes": notes, "preset_name": preset_name,
                    "written": None if written is None else str(written)})  # fmt: skip
        return
    _print(tuned, console)
    if chroma:
        typer.echo(f"the evaluator's own figures: python -m fissure.eval {path} -s "
                   f"'{tuned.winner.spec}' --embedder {embedder} -k {k} --questions "
                   f"{tuned.report_on}")  # fmt: skip
    if written is not None:
        use = f"--preset {preset_name}"
        typer.echo(
            f"wrote [presets.{preset_name}] to {shown(written)}: fissure ingest "
            f'{corpus_root(path)} {use}; fissure query "…" {use}'
        )


def _questions(
    path: Path,
    questions: Path | None,
    generate: int | None,
    endpoint: str | None,
    model: str | None,
    api_key_env: str,
    seed: int,
) -> tuple[Dataset, list[str], bool]:
    """The dataset to tune on, what to say about it (references not found …), and whether
    it is a Chroma dataset folder's own questions (which ``python -m fissure.eval`` reads)."""
    from fissure.plan.questions import (
        corpus_root,
        default_questions,
        load_questions,
        read_corpus,
        write_questions,
    )

    if generate is not None:
        from fissure.plan.generate import generate as ask

        if not endpoint or not model:
            fail("--generate needs --endpoint URL and --model NAME (an OpenAI-compatible server)")
        target = questions or GENERATED
        if target.exists():
            fail(f"{target} exists: remove it, or name another file with --questions")
        corpora, _ = read_corpus(corpus_root(path), exclude=target)
        made = ask(corpora, generate, endpoint=endpoint, model=model, api_key_env=api_key_env,
                   seed=seed)  # fmt: skip
        write_questions(target, made.dataset)
        questions = target
        note = (f"generated {len(made.dataset.questions)} questions from {made.asked} passages "
                f"into {target} ({made.malformed} replies not the JSON asked for, "
                f"{made.unlocated} of {made.quotes} quotes not found verbatim and dropped, "
                f"{made.dropped} questions left without one)")  # fmt: skip
        generated = [note]
    else:
        generated = []
        questions = questions or default_questions(path)
        if questions is None:
            fail(NO_QUESTIONS.format(path=path))
    own = default_questions(path)
    chroma = own is not None and own.resolve() == questions.resolve()
    located = load_questions(path, questions)
    ds = located.dataset
    notes = [
        *generated,
        f"{len(ds.questions)} questions over {len(ds.corpora)} documents from {questions}; "
        f"{located.unlocated} of {located.references} references could not be located in "
        f"the corpus and were left out, {located.dropped} questions with none left",
    ]
    if located.files_skipped:
        notes.append(f"{located.files_skipped} files under {path} are not UTF-8 text: skipped")
    return ds, notes, chroma


def _save(tuned: Tuned, name: str, config: Path | None) -> Path:
    from fissure.settings.edit import target_file, write_preset

    target = target_file(config)
    held = tuned.to_dict()["held_out"]
    comment = (
        f"fissure tune: {tuned.winner.spec}\n"
        f"chosen on {tuned.choose_on} rows by {tuned.key} ({tuned.embedder}); held out "
        f"on {tuned.report_on} rows: recall {held['recall']:.2f}, IoU {held['iou']:.2f}"
    )
    write_preset(target, name, tuned.winner.preset, comment)
    return target


def _print(tuned: Tuned, console: Console) -> None:
    from rich.console import Console
    from rich.table import Table

    c, r, k = tuned.choose_on, tuned.report_on, tuned.k
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("candidate (evaluator spec)")
    table.add_column("chunks", justify="right")
    for half in (c, r):
        role = "choose" if half == c else "held out"
        table.add_column(f"{half} ({role}) recall@{k}", justify="right")
        table.add_column(f"IoU@{k}", justify="right")
    for i, cand in enumerate(tuned.candidates):
        mark = "✓ " if i == tuned.chosen else "  "
        table.add_row(mark + cand.spec, str(cand.halves[c]["chunks"]),
                      *(f"{cand.score(h, f'k={k}/{m}'):.2f}" for h in (c, r)
                        for m in ("recall", "iou")))  # fmt: skip
    longest = max(len(cand.spec) for cand in tuned.candidates)
    Console(highlight=False, width=max(console.width, longest + 100)).print(table)
    held = tuned.to_dict()["held_out"]
    typer.echo(f"chosen on {c} rows ({tuned.questions[c]} questions) by {tuned.key}: "
               f"{tuned.winner.spec}")  # fmt: skip
    typer.echo(
        f"held out, {r} rows ({tuned.questions[r]} questions): recall@{k} "
        f"{held['recall']:.2f}, IoU@{k} {held['iou']:.2f}; embedder {tuned.embedder}"
    )
    for spec, why in tuned.skipped.items():
        typer.echo(f"skipped {spec}: {why}")
