"""The options the commands share, and what they do with them: where results go, the HTML page, the lab."""

from __future__ import annotations

import contextlib
import functools
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import click

from paidtwice._exceptions import UsageError
from paidtwice._pins import RESTATE_SERVER_VERSION, RESTATE_SERVER_VERSIONS
from paidtwice.cli._bad_input import BadInput
from paidtwice.engine import MAX_NODES, check_size
from paidtwice.lab import DEFAULT_PRICE_MODEL, Lab, check_price_model
from paidtwice.report import Section, write_html
from paidtwice.results import DEFAULT_RESULTS, RESULTS_ENV, RecordSink
from paidtwice.sweep import DEFAULT_RETRIES, ModelStub

__all__ = [
    "Option",
    "admin_url_option",
    "allow_undecided_option",
    "check_outputs",
    "cluster_option",
    "echo_err",
    "grouped",
    "html_option",
    "json_on_stdout",
    "json_option",
    "model_latency_option",
    "model_stub_options",
    "not_over",
    "open_lab",
    "output_width",
    "price_model_option",
    "records_option",
    "results_dir_option",
    "retries_option",
    "save_journals_option",
    "server_version_option",
    "shard_option",
    "wide_option",
    "writable",
    "write_report",
]

F = TypeVar("F", bound=Callable[..., Any])


class Option(Protocol):
    """A click option, or several: a decorator that hands the command back with them."""

    def __call__(self, command: F, /) -> F: ...


def grouped(name: str, build: Callable[..., Any], options: Sequence[Option]) -> Option:
    """Options a command takes as one object: their values go to `build`, and its result to the command as
    `name` (click hands the command each option's value; the command wants what they make together)."""

    def holder() -> None: ...

    for option in options:
        option(holder)
    names = [param.name for param in getattr(holder, "__click_params__", [])]

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def with_object(*args: Any, **values: Any) -> Any:
            given = {n: values.pop(n) for n in names}
            return command(*args, **{name: build(**given)}, **values)

        for option in reversed(options):
            with_object = option(with_object)
        return with_object  # type: ignore[return-value]

    return decorate


def _check_price_model(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        return check_price_model(value)
    except UsageError as err:
        raise BadInput(str(err)) from None


def _check_html_path(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    # Checked before the lab runs: a page that cannot be written must not cost a whole deck or sweep first.
    writable(value, "the HTML report")
    return value


def _check_cluster(ctx: click.Context, param: click.Parameter, value: int) -> int:
    """Refused before anything starts (the deck's first line included)."""
    if value != 1:
        try:
            check_size(value)
        except UsageError as err:
            raise BadInput(str(err)) from None
    return value


def html_option(shows: str = "timelines, journals, plots; opens from disk") -> Option:
    """--html FILE: one self-contained page, refused before anything runs when it cannot be written;
    `shows` is what the command's page holds, for the help."""
    return click.option(
        "--html",
        "html_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        callback=_check_html_path,
        help=f"Also write one self-contained HTML report here ({shows}).",
    )


server_version_option = click.option(
    "--server-version",
    type=click.Choice(RESTATE_SERVER_VERSIONS),
    default=RESTATE_SERVER_VERSION,
    show_default=True,
    help="restate-server version from npm (1.7.10 is the one the deck was recorded on).",
)
price_model_option = click.option(
    "--price-model",
    default=DEFAULT_PRICE_MODEL,
    show_default=True,
    metavar="NAME",
    callback=_check_price_model,
    help="The model whose prices (genai-prices) the dollars are at.",
)
model_latency_option = click.option(
    "--model-latency",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help="Seconds the stub's model takes to answer each call (default: the row's own, 0 for most).",
)
results_dir_option = click.option(
    "--results-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_RESULTS,
    show_default=True,
    envvar=RESULTS_ENV,
    help=f"Where records go when --json is not given (also ${RESULTS_ENV}).",
)
cluster_option = click.option(
    "--cluster",
    "cluster",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    callback=_check_cluster,
    help=f"Run on a cluster of N restate-server nodes on loopback (3 to {MAX_NODES}; 1 is a single server).",
)
admin_url_option = click.option(
    "--admin-url",
    default="http://127.0.0.1:9070",
    show_default=True,
    envvar="PAIDTWICE_ADMIN_URL",
    help="Admin API of the Restate server to read.",
)
"""--admin-url: the Restate server a command reads (also $PAIDTWICE_ADMIN_URL)."""
save_journals_option = click.option(
    "--save-journals",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Write each invocation's journal file here, for `paidtwice replay-check`.",
)


wide_option = click.option(
    "--wide",
    is_flag=True,
    help="Tables at full width, one line per row, whatever the terminal's width (as a pipe gets them).",
)


def output_width(wide: bool) -> int | None:
    """The columns the tables must fit: the terminal's (its size, or $COLUMNS), or None for full width with
    --wide or when stdout is not a terminal (a pipe, a file: what a script reads keeps one line per row)."""
    if wide or not sys.stdout.isatty():
        return None
    return max(20, shutil.get_terminal_size().columns)


STDOUT = "-"
"""`--json -`: the records on stdout, on every command that has --json."""
_ON_STDOUT = "paidtwice.json_on_stdout"
"""Set in the command's context when its records go to stdout (the table then stays off it)."""
_FLAG_FORM = "paidtwice:json-flag-form"
"""What `--json` with no value gives where the flag form of earlier releases is read as `--json -`."""


def json_option(help: str, *, each: bool = False, flag_form: bool = False) -> Callable[[F], F]:
    """--json FILE|-: where a command writes its records, said in `help`; `-` prints them on stdout when
    the command ends (what it prints meanwhile goes to stderr). `each`: the command prints each record on
    stdout itself as it comes (a watch's snapshots), so `-` is given to it as is. `flag_form`: `--json`
    alone is read as `--json -`, with a note (replay-check took it as a flag)."""
    more = " (--json with no file, as before, still prints them, and says so on stderr.)" if flag_form else ""
    return click.option(
        "--json",
        "json_path",
        metavar="FILE|-",
        # A directory is refused by the callback, in the words replay-check's inputs are refused in.
        type=click.Path(path_type=Path, allow_dash=True),
        default=None,
        is_flag=False,
        flag_value=_FLAG_FORM if flag_form else None,
        callback=_json_given if each else _json_target,
        help=f"{help} `-` prints them on stdout"
        + (" instead of the table." if each else " when the command ends (what it says goes to stderr then).")
        + more,
    )


def json_on_stdout() -> bool:
    """The running command's records go to stdout (`--json -`)."""
    return bool(click.get_current_context().meta.get(_ON_STDOUT))


def _json_given(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    ctx.meta[_ON_STDOUT] = value is not None and str(value) == STDOUT
    if value is not None and value.is_dir():
        not_over(value, "it is a directory")
    return value


def not_over(path: Path, why: str) -> None:
    """Refuse `--json PATH` where PATH is not a place for the records (`why`: what it is)."""
    raise BadInput(
        f"not writing the records over {path}: {why} (--json takes the file to write them to; "
        "--json - prints them)"
    )


def _json_target(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    if value is not None and str(value) == _FLAG_FORM:
        echo_err(
            "paidtwice: --json now takes a file (--json FILE); --json - is the new spelling of printing "
            "the records"
        )
        value = Path(STDOUT)
    if value is None or str(value) != STDOUT:
        return _json_given(ctx, param, value)
    ctx.meta[_ON_STDOUT] = True
    return ctx.with_resource(_records_to_stdout())


@contextlib.contextmanager
def _records_to_stdout() -> Iterator[Path]:
    """A file the command writes its records to as it does to any --json FILE (a sweep after each point, a
    soak also when stopped), printed on stdout when the command ends, however it ends. Meanwhile what the
    command prints goes to stderr, so stdout holds the records alone (`paidtwice sweep --json - | jq`)."""
    with tempfile.TemporaryDirectory(prefix="paidtwice-json-") as folder:
        path = Path(folder) / "records.json"
        stdout = sys.stdout
        try:
            with contextlib.redirect_stdout(sys.stderr):
                yield path
        finally:
            if path.exists():
                click.echo(path.read_text(), file=stdout, nl=False)


def echo_err(message: str) -> None:
    """Progress and notes go to stderr; stdout is the result."""
    click.echo(message, err=True)


def open_lab(*, server_version: str, price_model: str, cluster: int) -> Lab:
    """A lab that reports its progress on stderr."""
    return Lab(server_version=server_version, echo=echo_err, price_model=price_model, cluster=cluster)


def writable(path: Path | None, what: str, *, directory: bool = False) -> None:
    """Refuse, before anything runs, a place a command could not write its results to (its directory
    cannot be made, or is not writable): one line and exit 2, where the write would have failed with a
    traceback after the runs."""
    if path is None:
        return
    folder = path if directory else path.parent
    blocking = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if blocking is not None and not blocking.is_dir():
        raise BadInput(f"cannot write {what} to {path}: {blocking} is a file, not a directory")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".{path.name}.paidtwice-probe"
        probe.touch()
        probe.unlink()
    except FileExistsError:
        raise BadInput(f"cannot write {what} to {path}: {folder} is a file, not a directory") from None
    except OSError as err:
        raise BadInput(f"cannot write {what} to {path}: {err.strerror or err}") from None


def check_outputs(
    json_path: Path, html_path: Path | None, *, journals: Path | None = None, what: str = "the records"
) -> None:
    """Where a lab command writes, refused before anything runs when it cannot be written (the --html page
    is checked by its option) or when the page would replace the results."""
    writable(json_path, what)
    _not_over(html_path, [json_path])
    writable(journals, "the journals", directory=True)


def _not_over(page: Path | None, sources: list[Path]) -> None:
    if page is not None and any(page.resolve() == source.resolve() for source in sources):
        raise BadInput(
            f"not writing the HTML report over {page}: it holds the results (give --html NAME.html)"
        )


def write_report(path: Path | None, title: str, sections: list[Section], sources: list[Path]) -> None:
    """The --html page, when one was asked for."""
    if path is None:
        return
    _not_over(path, sources)
    try:
        write_html(path, title, sections, sources=[str(s) for s in sources])
    except OSError as err:
        raise BadInput(f"cannot write the HTML report to {path}: {err.strerror or err}") from None
    click.echo(f"HTML report: {path}")


def _parse_shard(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    k, slash, n = value.partition("/")
    if not (slash and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise BadInput(f"--shard {value}: expected K/N with 1 <= K <= N (e.g. 1/2)")
    return int(k), int(n)


shard_option = click.option(
    "--shard",
    metavar="K/N",
    default=None,
    callback=_parse_shard,
    help="Run only the K-th of N shares of the crash points (a CI matrix of N runners); "
    "`paidtwice report` merges the shards' records into one report and one verdict.",
)

allow_undecided_option = click.option(
    "--allow-undecided",
    is_flag=True,
    help="A crash point left undecided (its kill did not land at its moment after its retries, or its "
    "replay could not finish) does not fail the check; SARIF and GitHub then warn, JUnit skips it.",
)

retries_option = click.option(
    "--retries",
    type=click.IntRange(min=0),
    default=DEFAULT_RETRIES,
    show_default=True,
    metavar="N",
    help="Times a point whose kill missed its moment is run again, on an agent of its own, before it is "
    "called not placed (undecided).",
)


def records_option(help: str, *, stem: str) -> Option:
    """--json FILE|- and --results-dir, handed to the command as `sink`: the `RecordSink` its records go
    through (RESULTS_DIR/STEM-TIME-PID.json when no file is given)."""

    def sink(json_path: Path | None, results_dir: Path) -> RecordSink:
        return RecordSink.at(json_path, results_dir=results_dir, stem=stem)

    return grouped("sink", sink, [json_option(help), results_dir_option])


def _model_stub(price_model: str, model_latency: float | None) -> ModelStub:
    return ModelStub(latency=model_latency or 0.0, price_model=price_model)


model_stub_options = grouped("model", _model_stub, [price_model_option, model_latency_option])
"""--price-model and --model-latency, handed to the command as `model`, a `ModelStub`."""
