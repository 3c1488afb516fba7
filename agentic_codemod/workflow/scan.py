"""Where the rules match: ast-grep over the repository's source files, bounded, cached, fail-closed.

    Scanner(root, settings).matches(rule) -> [Hit]     every match of one rule in the source files
    source_files(root, language) -> [path]             what git lists (so .gitignore applies)

File names are data: each goes to ast-grep as `./name` after `--`, in batches of at most
`scan.max_argv_bytes`. ast-grep runs with a config file of ours (`-c`), so an `sgconfig.yml` in the
repository cannot remap languages; with `--info`, so its exit code means only failure; and with
`--inspect entity`, so a file it skipped (too large) or could not read is seen. Its JSON is read as a
stream (`--json=stream`) and only what the tool needs of each match is kept. Results are cached per
(rule, file, content digest): a file that did not change since the last scan of the same rule is not
scanned again (plan, codemod and the final gate share one Scanner).

Failures are never "no matches":
    ast-grep exits non-zero, prints an error, or scans fewer files than given  -> ScanFailed (exit 1)
    ast-grep skips a file (fileTooLarge), or a cap is exceeded                  -> RequiresHuman (exit 3)
    a file name in the repository is not UTF-8                                  -> RequiresHuman (exit 3)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from agentic_codemod.config import ScanSettings
from agentic_codemod.errors import EnvironmentUnavailable, RequiresHuman
from agentic_codemod.tools.snapshot import GitError, git
from agentic_codemod.workflow.scan_output import (
    TOOL,
    Budget,
    Hit,
    Read,
    ScanFailed,
    checked_report,
    read_stream,
)

if TYPE_CHECKING:
    from agentic_codemod.workflow.codemod import Rule

SOURCE_SUFFIXES = {"python": (".py",)}
_OUR_CONFIG = "ruleDirs: []\n"


def ast_grep_binary() -> str:
    beside = Path(sys.executable).parent / TOOL
    found = str(beside) if beside.exists() else shutil.which(TOOL)
    if not found:
        raise EnvironmentUnavailable("ast-grep is not installed", hint="pip install ast-grep-cli")
    return found


def source_files(root: Path, language: str) -> list[str]:
    """Tracked and untracked (not ignored) regular source files, repo-relative, sorted.
    RequiresHuman when any name git lists is not UTF-8: no tool step can name such a file safely."""
    try:
        listed = git(root, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    except GitError as exc:
        raise ScanFailed(f"cannot list the repository's files: {exc}") from exc
    names: list[str] = []
    for raw in listed.split(b"\0"):
        if not raw:
            continue
        try:
            names.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            shown = raw.decode("utf-8", "backslashreplace")
            raise RequiresHuman(
                f"the repository has a file name that is not UTF-8: {shown!r}",
                hint="rename the file to UTF-8; the tool reads, reports and publishes UTF-8 paths only",
            ) from None
    suffixes = SOURCE_SUFFIXES.get(language, ())
    return sorted(n for n in dict.fromkeys(names) if n.endswith(suffixes) and _regular(root / n))


@dataclass
class Scanner:
    root: Path
    settings: ScanSettings = field(default_factory=ScanSettings)
    runs: int = 0  # ast-grep processes started (the cache is what keeps this low)
    _cache: dict[tuple[str, str, str], list[Hit]] = field(default_factory=dict)

    def matches(self, rule: Rule) -> list[Hit]:
        files = source_files(self.root, rule.language)
        digests = {f: _digest(self.root / f) for f in files}
        todo = [f for f in files if (rule.id, f, digests[f]) not in self._cache]
        cached = [
            h
            for f in files
            if (rule.id, f, digests[f]) in self._cache
            for h in self._cache[(rule.id, f, digests[f])]
        ]
        fresh = self._scan(rule, todo, cached) if todo else {}
        for f in todo:
            self._cache[(rule.id, f, digests[f])] = fresh.get(f, [])
        hits = [h for f in files for h in self._cache[(rule.id, f, digests[f])]]
        self._cap_matches(rule, hits)
        return hits

    def _cap_matches(self, rule: Rule, hits: list[Hit]) -> None:
        cap = self.settings.max_matches_per_rule
        if len(hits) > cap:
            where, n = Counter(h.file for h in hits).most_common(1)[0]
            raise RequiresHuman(
                f"rule {rule.id} matches more than {cap} times (scan.max_matches_per_rule); "
                f"most in {where} ({n})",
                hint="a change of this size needs a human plan; or raise scan.max_matches_per_rule",
            )

    def _scan(self, rule: Rule, files: list[str], cached: list[Hit]) -> dict[str, list[Hit]]:
        self._cap_matches(rule, cached)
        found: dict[str, list[Hit]] = {}
        budget = Budget(self.settings.max_output_bytes)
        with tempfile.TemporaryDirectory(prefix="codemod-scan-") as tmp:
            config = Path(tmp) / "sgconfig.yml"
            config.write_text(_OUR_CONFIG, encoding="utf-8")
            for batch in _batches(files, self.settings.max_argv_bytes):
                left = self.settings.max_matches_per_rule - len(cached) - sum(map(len, found.values()))
                self._run(rule, batch, config, found, budget, left + 1)
                self._cap_matches(rule, [*cached, *(h for hits in found.values() for h in hits)])
        return found

    def _run(
        self,
        rule: Rule,
        batch: list[str],
        config: Path,
        found: dict[str, list[Hit]],
        budget: Budget,
        limit: int,
    ) -> None:
        argv = [ast_grep_binary(), "scan", "-c", str(config), "--rule", str(rule.path), "--json=stream"]
        # --info: every rule reports at one severity, so the exit code says only whether the tool failed
        # (error-level matches exit 1; "severity: off" would skip the rule).
        argv += [
            "--info",
            "--inspect",
            "entity",
            "--max-results",
            str(limit),
            "--",
            *(f"./{f}" for f in batch),
        ]
        self.runs += 1
        timed_out = threading.Event()
        with tempfile.TemporaryFile() as errors:
            try:
                proc = subprocess.Popen(
                    argv, cwd=self.root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors
                )
            except OSError as exc:
                raise ScanFailed(f"{TOOL} could not start for rule {rule.id}: {exc}") from exc

            def stop() -> None:
                timed_out.set()
                proc.kill()

            timer = threading.Timer(self.settings.timeout_s, stop)
            timer.start()
            read = Read()
            try:
                assert proc.stdout is not None
                read = read_stream(rule.id, proc.stdout, found, budget, limit)
            finally:
                if not read.complete and proc.poll() is None:
                    proc.kill()  # the tool stopped reading (a cap, an error): the scanner must not linger
                code = proc.wait()
                timer.cancel()
                if proc.stdout is not None:
                    proc.stdout.close()
            stderr = _head(errors, 4 * self.settings.max_argv_bytes + 65_536)
        if timed_out.is_set():
            raise RequiresHuman(
                f"rule {rule.id}: {TOOL} did not finish within {self.settings.timeout_s:.0f}s "
                f"(scan.timeout_s) on {len(batch)} file(s), the largest {_largest(self.root, batch)}",
                hint="raise scan.timeout_s, or migrate this repository by hand",
            )
        if read.over is not None:
            raise RequiresHuman(
                f"rule {rule.id}: {TOOL} printed more than {budget.cap} bytes of matches "
                f"(scan.max_output_bytes), in {read.over or _largest(self.root, batch)}",
                hint="a match of this size needs a human; or raise scan.max_output_bytes",
            )
        if read.count >= limit:
            return  # more matches than the cap allows: the caller names the rule and the file
        self._check_exit(rule, batch, code, stderr)

    def _check_exit(self, rule: Rule, batch: list[str], code: int, stderr: str) -> None:
        skipped, named = checked_report(rule.id, batch, code, stderr)
        if skipped:
            where = ", ".join(f"{f} ({why})" for f, why in sorted(named.items())[:3])
            raise RequiresHuman(
                f"{TOOL} skipped {skipped} file(s) for rule {rule.id}, so the rules cannot see into "
                + (where or _largest(self.root, batch)),
                hint="split the file, or migrate it by hand",
            )


def _batches(files: list[str], max_bytes: int) -> list[list[str]]:
    batches: list[list[str]] = [[]]
    size = 0
    for f in files:
        n = len(f.encode("utf-8")) + 3  # "./" and the terminating NUL
        if batches[-1] and size + n > max_bytes:
            batches.append([])
            size = 0
        batches[-1].append(f)
        size += n
    return [b for b in batches if b]


def _digest(path: Path) -> str:
    h = hashlib.blake2b(digest_size=20)
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)  # no symlinks: their target is scanned as itself
    except OSError:
        return False


def _largest(root: Path, files: list[str]) -> str:
    sizes = {f: os.lstat(root / f).st_size for f in files if _regular(root / f)}
    return max(sizes, key=lambda f: sizes[f]) if sizes else (files[0] if files else "?")


def _head(handle: IO[bytes], limit: int) -> str:
    handle.seek(0)
    return handle.read(limit).decode("utf-8", "replace")
