"""`fleet --local`: the fleet on this machine, as a bounded pool of `agentic-codemod run` processes.

Repositories share what they have in common: the runner's cache of environment templates (one per
dependency set, built once, copied per run; --cache-dir or CODEMOD_CACHE_DIR says where).
Each repository runs in its own process group with its own run directory and log, so one repository's
crash, hang or pause never touches another; a run that outlives the timeout gets SIGTERM (the run writes
its artifacts as `cancelled`), then SIGKILL. fleet.json is rewritten after every finished repository,
so an interrupted fleet keeps what it learned, and a rerun resumes (record.can_skip).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agentic_codemod.config import CACHE_DIR_VARIABLE, RUN_STOP_GRACE_S
from agentic_codemod.fleet.context import snapshot_context
from agentic_codemod.fleet.progress import current_step
from agentic_codemod.fleet.record import (
    CRASHED,
    FleetEntry,
    FleetReport,
    can_skip,
    entry_from_run,
    read_report,
    write_report,
)
from agentic_codemod.fleet.repos import FleetFile, FleetRepo
from agentic_codemod.status import Outcome
from agentic_codemod.task import load_task
from agentic_codemod.tools.process_group import stop_group

REPORT = "fleet.json"


@dataclass(frozen=True)
class LocalFleet:
    fleet: FleetFile
    task: Path
    out_dir: Path
    jobs: int = 2
    context: Path = Path(".")
    config: Path | None = None
    timeout_s: float = 3600.0
    poll_s: float = 0.25
    cache_dir: Path | None = None  # the runs' shared cache (environment templates); None: the runner's


def run_local(options: LocalFleet, console: Console | None = None) -> FleetReport:
    console = console or Console(stderr=True)
    task = load_task(options.task)  # a bad task file stops the fleet before anything runs (exit 2)
    task_sha = hashlib.sha256(options.task.read_bytes()).hexdigest()
    out = options.out_dir.resolve()
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(snapshot_context(options.context, out / ".contexts" / ".check"))  # bad context: stop now
    previous = read_report(out / REPORT)
    earlier = {e.name: e for e in previous.repos} if previous else {}
    report = FleetReport(
        task_id=task.id,
        task_sha256=task_sha,
        jobs=options.jobs,
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    start = time.monotonic()
    entries: dict[str, FleetEntry] = {}
    pending: list[FleetRepo] = []
    for repo in options.fleet.repos:
        path = options.fleet.local_path(repo)
        why = can_skip(earlier.get(repo.name), task_sha, previous.task_sha256 if previous else "", path)
        if why:
            entries[repo.name] = earlier[repo.name].model_copy(
                update={"resumed": True, "reason": f"skipped: {why}"}
            )
        else:
            pending.append(repo)
    progress = Progress(
        TextColumn("[bold]fleet[/] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    overall = progress.add_task("", total=len(options.fleet.repos), completed=len(entries))
    started: dict[str, float] = {}
    with (
        ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool,
        Live(console=console, refresh_per_second=4, transient=True) as live,
    ):
        futures: dict[Future[FleetEntry], FleetRepo] = {
            pool.submit(_run_one, options, repo, out, started): repo for repo in pending
        }
        while futures:
            done = [f for f in futures if f.done()]
            for f in done:
                repo = futures.pop(f)
                entries[repo.name] = _result(f, repo, options, out)
                progress.advance(overall)
                _save(out, report, entries, options, start)
            progress.update(overall, description=_counts(entries.values()))
            live.update(Group(progress, _running_table(options, out, started, entries)))
            if futures:  # the display refreshes every poll; a finished run is taken at once
                wait(futures, timeout=options.poll_s, return_when=FIRST_COMPLETED)
        live.update(Group(progress))
    return _save(out, report, entries, options, start)


def _result(f: Future[FleetEntry], repo: FleetRepo, options: LocalFleet, out: Path) -> FleetEntry:
    """The repository's entry; a crash of the pool's own code fails that repository, not the fleet."""
    try:
        return f.result()
    except Exception as exc:
        return FleetEntry(
            name=repo.name,
            repo=str(repo.path),
            run_dir=str(out / repo.name),
            status=CRASHED,
            outcome=Outcome.FAILED,
            exit_code=1,
            reason=f"{type(exc).__name__}: {exc}",
        )


def _run_one(options: LocalFleet, repo: FleetRepo, out: Path, started: dict[str, float]) -> FleetEntry:
    path = options.fleet.local_path(repo)
    run_dir = out / repo.name
    shutil.rmtree(run_dir, ignore_errors=True)
    context = snapshot_context(options.context, out / ".contexts" / repo.name)
    argv = [
        sys.executable,
        "-P",  # the fleet's working directory (it may be a checkout) is not where agentic_codemod comes from
        "-m",
        "agentic_codemod",
        "run",
        "--repo",
        str(path),
        "--task",
        str(options.task.resolve()),
        "--run-dir",
        str(run_dir),
        "--context",
        str(context),
        "--quiet",
        *options.fleet.run_args(repo, local=True),
    ]
    if options.config is not None:
        argv += ["--config", str(options.config.resolve())]
    started[repo.name] = time.monotonic()
    note = ""
    with open(out / f"{repo.name}.log", "wb") as log:
        proc = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=_run_env(options),
            start_new_session=True,
        )
        try:
            code = proc.wait(timeout=options.timeout_s)
        except subprocess.TimeoutExpired:
            note = f"timed out after {options.timeout_s:.0f}s and was stopped"
            code = stop_group(proc, RUN_STOP_GRACE_S)
    wall = time.monotonic() - started.pop(repo.name)
    shutil.rmtree(context, ignore_errors=True)
    if not note and not (run_dir / "run.json").exists():  # the run never started: say why, from its log
        note = _last_line(out / f"{repo.name}.log")
    return entry_from_run(repo.name, path, run_dir, code, wall, note)


def _run_env(options: LocalFleet) -> dict[str, str]:
    """Every run of the fleet uses one cache: a dependency set's environment template is built by the
    first run that needs it and copied by the others (adapters/python/env_template.py)."""
    env = {**os.environ, "AGNO_TELEMETRY": "false"}
    if options.cache_dir is not None:
        env[CACHE_DIR_VARIABLE] = str(options.cache_dir.resolve())
    env.pop("PYTHONPATH", None)
    if pythonpath := child_pythonpath(os.environ.get("PYTHONPATH", "")):
        env["PYTHONPATH"] = pythonpath
    return env


def child_pythonpath(caller: str) -> str:
    """The runs' PYTHONPATH: the directory this fleet's agentic_codemod came from, where that is a source
    checkout rather than an installed site directory (so the runs are the same code as the fleet), then
    the caller's absolute entries. An empty or relative entry would put the working directory back on
    sys.path, -P or not: it is left out."""
    import site

    root = str(Path(__file__).resolve().parents[2])  # agentic_codemod/fleet/local.py -> its source root
    installed = {str(Path(p).resolve()) for p in [*site.getsitepackages(), site.getusersitepackages()]}
    kept = [root] if root not in installed else []
    kept += [entry for entry in caller.split(os.pathsep) if os.path.isabs(entry) and entry not in kept]
    return os.pathsep.join(kept)


def _last_line(log: Path) -> str:
    lines = [line.strip() for line in log.read_text(encoding="utf-8", errors="replace").splitlines()]
    return next((line for line in reversed(lines) if line), "")[:300]


def _save(
    out: Path, report: FleetReport, entries: dict[str, FleetEntry], options: LocalFleet, start: float
) -> FleetReport:
    order = [r.name for r in options.fleet.repos]
    report.repos = [entries[n] for n in order if n in entries]
    report.wall_s = round(time.monotonic() - start, 2)
    report.finished_at = datetime.now(UTC).isoformat(timespec="seconds")
    write_report(out / REPORT, report)
    return report


def _counts(entries: Iterable[FleetEntry]) -> str:
    tally = dict.fromkeys(Outcome, 0)
    for e in entries:
        tally[e.outcome] += 1
    return (
        f"[green]{tally[Outcome.DONE]} done[/] [red]{tally[Outcome.FAILED]} failed[/] "
        f"[yellow]{tally[Outcome.PAUSED]} paused {tally[Outcome.NEEDS_HUMAN]} need a human[/]"
    )


def _running_table(
    options: LocalFleet, out: Path, started: dict[str, float], entries: dict[str, FleetEntry]
) -> Table:
    table = Table(box=None, show_header=True, header_style="dim", pad_edge=False)
    for column in ("repository", "step", "elapsed"):
        table.add_column(column)
    now = time.monotonic()
    for name, t0 in sorted(started.items()):
        if name not in entries:
            table.add_row(name, current_step(out / name), f"{now - t0:5.1f}s")
    return table
