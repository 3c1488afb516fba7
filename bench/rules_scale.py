"""The rules phase at scale: the tool's rule time against one direct ast-grep scan with all the rules.

Generates git repositories of 1,000 and 10,000 Python files (one in twenty uses the acme SDK in ways the
fixture's migration rules fix or flag, the rest are plain modules), then measures on each:

  tool    the rule phase of a run, and nothing else of it: the plan's scan of every rule (find_matches),
          the codemod step (apply_rules: every fixable rule in order, each rule's edits written to disk
          and assessed by rule_risk, the files an earlier rule edited scanned again for the later ones)
          and the final gate's scan of the detect-only rules, through one Scanner as in a run. The edits
          go through a plain file writer, not the run's Workspace (its trace, deny globs and atomic
          writes cost more per edited file: not counted here).
  direct  one `ast-grep scan` of the same files with the same rules (its own walker and ignore handling,
          JSON to a pipe): what finding the matches costs, without applying or checking any edit (the
          goal's reference)
  direct -U  the same scan applying every fix itself (`--update-all`, one pass: each rule sees the
          original files, and no edit is checked): printed beside it, what applying edits costs ast-grep

Both run on copies of one generated repository whose files are older than scan.RACY_NS, as a run's
clone is once its baseline has been installed (`--fresh`: measure on files just written; the tool then
reads each file once to identify its content). Printed: wall and CPU seconds (CPU = this process plus
its children: steadier on a shared machine), the tool's time per phase, its CPU split into ast-grep
(and git) processes and its own Python, and the ratios (goal: tool <= 1.3x direct). Not a test: it
prints figures and asserts nothing. `--quick` generates 40 files, a smoke test for CI.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentic_codemod.workflow import codemod
from agentic_codemod.workflow.scan import RACY_NS, Scanner, ast_grep_binary, source_suffixes

ROOT = Path(__file__).resolve().parents[1]
RULES_DIR = ROOT / "fixtures/packages/acme-sdk-2-migration/.apm/skills/acme-sdk-2-migration/rules"
USES_SDK = '''"""Orders, module {i}."""

from acme.errors import NotFound
from acme.utils import paginate


class Service{i}:
    def __init__(self, client):
        self._client = client

    def get(self, order_id):
        try:
            return self._client.fetch(f"/orders/{{order_id}}", timeout_s=3)
        except NotFound:
            return None

    def open_orders(self):
        return list(paginate(self._client, "/orders", page_size=100))

    def dynamic(self, name):
        return getattr(self._client, name)()
'''
PLAIN = '''"""A plain module, {i}."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Record{i}:
    id: int
    name: str

    def label(self) -> str:
        return f"{{self.id}}: {{self.name}}"


def total(records: list[Record{i}]) -> int:
    return sum(r.id for r in records)
'''
GIT = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x.invalid", "GIT_COMMITTER_NAME": "b"}


class FileWriter:
    """The codemod's writer without the workspace's budgets (a bench repository has thousands of edits)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def read(self, rel: str, actor: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def write(self, rel: str, content: str, actor: str) -> None:
        (self.root / rel).write_text(content, encoding="utf-8")


def make_repo(root: Path, files: int) -> Path:
    for i in range(files):
        path = root / f"pkg{i // 100:03d}" / f"mod_{i:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text((USES_SDK if i % 20 == 0 else PLAIN).format(i=i), encoding="utf-8")
    env = {**os.environ, **GIT, "GIT_COMMITTER_EMAIL": "b@x.invalid"}
    for args in (["init", "-q"], ["config", "gc.auto", "0"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


def tool_seconds(repo: Path) -> tuple[dict[str, float], int, int]:
    """Seconds per phase (plan, codemod, gate) through one Scanner; the matches found and the ast-grep
    processes started (one per batch of file names, one batch a phase at most sizes, plus one per rule
    that edited files, over those files only)."""
    rules = codemod.load_rules(RULES_DIR)
    settings = codemod.Scanner(repo).settings.model_copy(update={"max_matches_per_rule": 60_000})
    scanner = Scanner(repo, settings)
    times: dict[str, float] = {}
    start = time.perf_counter()
    found = codemod.find_matches(rules, repo, scanner)
    times["plan"] = time.perf_counter() - start
    codemod.apply_rules(rules, repo, FileWriter(repo), scanner)
    times["codemod"] = time.perf_counter() - start - times["plan"]
    codemod.find_matches([r for r in rules if not r.fixable], repo, scanner)
    times["gate"] = time.perf_counter() - start - times["plan"] - times["codemod"]
    return times, len(found), scanner.runs


def direct_seconds(repo: Path, update: bool = False) -> float:
    """One ast-grep scan of `repo` with every rule: matches as JSON, or (update) every fix applied."""
    with tempfile.TemporaryDirectory(prefix="rules-scale-") as tmp:
        config = Path(tmp) / "sgconfig.yml"
        config.write_text(f"ruleDirs: [{str(RULES_DIR)!r}]\n", encoding="utf-8")
        output = ["--update-all"] if update else ["--info", "--json=stream"]
        start = time.perf_counter()
        subprocess.run(
            [ast_grep_binary(), "scan", "-c", str(config), *output, "."],
            cwd=repo,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL if update else None,  # "Applied N changes"
            check=True,
        )
        return time.perf_counter() - start


def cpu() -> float:
    """CPU seconds of this process and its finished children (steadier than wall time on a busy machine)."""
    return own_cpu() + children_cpu()


def own_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def children_cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def aged(tree: Path, since: float, fresh: bool) -> Path:
    """Wait until the files written at `since` are older than scan.RACY_NS (unless `fresh`)."""
    if not fresh:
        time.sleep(max(0.0, since + RACY_NS / 1e9 + 0.1 - time.time()))
    return tree


def measure(base: Path, files: int, repeat: int, fresh: bool) -> None:
    """Alternating direct and tool runs, each on its own copy; medians of wall and CPU seconds."""
    repo = make_repo(base / f"repo-{files}", files)
    direct: list[tuple[float, float]] = []
    updating: list[float] = []
    tool: list[tuple[float, dict[str, float], float, float]] = []
    matches = runs = 0
    for n in range(repeat):
        since = time.time()
        plain = base / f"plain-{files}-{n}"
        shutil.copytree(repo, plain, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        fixed = base / f"fixed-{files}-{n}"
        shutil.copytree(repo, fixed, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        copy = base / f"copy-{files}-{n}"
        shutil.copytree(repo, copy, symlinks=True)  # the tool's run edits its tree
        before = cpu()
        direct.append((direct_seconds(aged(plain, since, fresh)), cpu() - before))
        updating.append(direct_seconds(aged(fixed, since, fresh), update=True))
        before, children = cpu(), children_cpu()
        times, matches, runs = tool_seconds(aged(copy, since, fresh))
        tool.append((sum(times.values()), times, cpu() - before, children_cpu() - children))
        for tree in (plain, fixed, copy):
            shutil.rmtree(tree)
    d_wall, d_cpu = statistics.median(w for w, _ in direct), statistics.median(c for _, c in direct)
    u_wall = statistics.median(updating)
    t_wall, t_cpu = statistics.median(t[0] for t in tool), statistics.median(t[2] for t in tool)
    t_sub = statistics.median(t[3] for t in tool)
    plan = statistics.median(t[1]["plan"] for t in tool)
    phases = ", ".join(f"{k} {statistics.median(t[1][k] for t in tool):.2f}" for k in tool[0][1])
    print(
        f"{files:6d} files ({matches} matches, {runs} ast-grep runs, median of {repeat}"
        f"{', files just written' if fresh else ''})\n"
        f"    tool   wall {t_wall:7.2f} s ({phases})   cpu {t_cpu:7.2f} s"
        f" (ast-grep and git {t_sub:.2f}, python {t_cpu - t_sub:.2f})\n"
        f"    direct wall {d_wall:7.2f} s   cpu {d_cpu:7.2f} s\n"
        f"    direct -U wall {u_wall:4.2f} s (ast-grep applying every fix itself, unchecked): tool"
        f" {t_wall / u_wall:.2f}x of it\n"
        f"    ratio  wall {t_wall / d_wall:5.2f}x   cpu {t_cpu / d_cpu:5.2f}x   (goal <= 1.3x)"
        f"   plan scan alone wall {plan / d_wall:5.2f}x   ast-grep processes alone cpu {t_sub / d_cpu:5.2f}x",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small repository (CI smoke test)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--repeat", type=int, default=3, help="paired runs per size (medians)")
    parser.add_argument("--fresh", action="store_true", help="measure on files just written (not aged)")
    args = parser.parse_args(argv)
    sizes, repeat = ([40], 1) if args.quick else (args.sizes, args.repeat)
    # The adapters' modules, loaded by a run's detect step long before its rules: not the rule phase's
    # (0.27 s, once per process, else charged to the first size's plan scan).
    source_suffixes("python")
    with tempfile.TemporaryDirectory(prefix="rules-scale-") as tmp:
        for files in sizes:
            measure(Path(tmp), files, repeat, args.fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
