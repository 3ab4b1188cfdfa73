"""Entry point: ``m3kit <verb> ...``. Every m3kit error becomes one line on stderr and exit 2."""

from __future__ import annotations

from typing import Protocol, TypeGuard

import typer
from rich.console import Console

from m3kit import __version__
from m3kit.cli import compare as compare_cli
from m3kit.cli import compose, demo, eval, quickstart, score, video
from m3kit.cli import export as export_cli
from m3kit.cli import judge as judge_cli
from m3kit.cli import listing as listing_cli
from m3kit.cli import m3eval as m3eval_cli
from m3kit.cli import m3exam as m3exam_cli
from m3kit.cli import report as report_cli
from m3kit.cli import review as review_cli
from m3kit.cli import supermemory as supermemory_cli
from m3kit.errors import M3kitError

INTERRUPTED = 130  # the shell's exit status for a process stopped by SIGINT

app = typer.Typer(
    name="m3kit",
    help="Evaluate and build multimodal memory.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(video.app, name="video")
app.add_typer(compose.app, name="compose")
app.add_typer(score.app, name="score")
app.add_typer(m3exam_cli.app, name="m3exam")
app.add_typer(m3eval_cli.app, name="m3eval")
app.add_typer(supermemory_cli.app, name="supermemory")
app.command("demo")(demo.demo)
app.command("eval")(eval.eval_command)
app.command("quickstart")(quickstart.quickstart)
app.command("report")(report_cli.report_command)
app.command("compare")(compare_cli.compare_command)
app.command("judge-agreement")(judge_cli.judge_agreement_command)
app.command("list")(listing_cli.list_command)
app.command("export")(export_cli.export_command)
app.command("review")(review_cli.review_command)


@app.callback(invoke_without_command=True)
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    if version:
        typer.echo(f"m3kit {__version__}")
        raise typer.Exit()


class _UsageError(Protocol):
    """What m3kit uses of click's ``ClickException``."""

    exit_code: int

    def format_message(self) -> str: ...


def _is_usage_error(exc: BaseException) -> TypeGuard[_UsageError]:
    # Usage errors are click's ClickException; recent typer releases raise them from a click
    # they vendor (``typer._click``), whose class is not ``click.ClickException``.
    return any(cls.__name__ == "ClickException" for cls in type(exc).__mro__)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code instead of raising (tests call this directly)."""
    err = Console(stderr=True)
    try:
        # typer turns Ctrl-C (and SIGTERM during a run, m3kit.harness.run) into a returned 130
        code = app(args=argv, prog_name="m3kit", standalone_mode=False)
        if code == INTERRUPTED:
            err.print("m3kit: interrupted", markup=False)
            return INTERRUPTED
    except M3kitError as exc:
        err.print(f"m3kit: error: {exc}", markup=False, highlight=False, soft_wrap=True)
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        err.print("m3kit: aborted", markup=False)
        return INTERRUPTED
    except KeyboardInterrupt:
        err.print("m3kit: interrupted", markup=False)
        return INTERRUPTED
    except Exception as exc:
        if _is_usage_error(exc):  # a missing argument, an unknown option, a bad value...
            # one line, as every other refusal (click's own show() prints a usage block)
            ctx = getattr(exc, "ctx", None)
            hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
            message = " ".join(str(exc.format_message()).split())
            err.print(f"m3kit: error: {message}{hint}", markup=False, highlight=False,
                      soft_wrap=True)
            return exc.exit_code
        raise
    return 0


