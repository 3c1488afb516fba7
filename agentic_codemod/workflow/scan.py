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
import json
import os
import re
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
from agentic_codemod.errors import CodemodError, EnvironmentUnavailable, RequiresHuman
from agentic_codemod.tools.snapshot import GitError, git

if TYPE_CHECKING:
    from agentic_codemod.workflow.codemod import Rule

SOURCE_SUFFIXES = {"python": (".py",)}
TOOL = "ast-grep"
# `--inspect entity` prints these (and per-file lines) on stderr; anything else on stderr is an error.
_SUMMARY = re.compile(r"^sg: summary\|file: scannedFileCount=(\d+),skippedFileCount=(\d+)$")
_RULES = re.compile(r"^sg: summary\|rule: effectiveRuleCount=(\d+),skippedRuleCount=(\d+)$")
_INSPECT = "sg: "
_OUR_CONFIG = "ruleDirs: []\n"


class ScanFailed(CodemodError):
    """The scanning tool failed: its matches are unknown, so the run fails (never "no matches")."""

    status = "failed"


@dataclass(frozen=True)
class Hit:
    """What the tool keeps of one ast-grep match."""

    rule_id: str
    file: str
    line: int  # 1-based
    start: int  # byte offsets of the replaced span (replacementOffsets, else the match range)
    end: int
    replacement: str | None


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
        budget = _Budget(self.settings.max_output_bytes)
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
        budget: _Budget,
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
            read = _Read()
            try:
                assert proc.stdout is not None
                read = _read_stream(rule, proc.stdout, found, budget, limit)
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
        """Exit code, error lines and the tool's own count of what it scanned and skipped."""
        reasons = {f: _skip_reason(stderr, f) for f in batch}
        for f in batch:  # a name may hold a newline: take the names out before reading lines
            stderr = stderr.replace(f"{_INSPECT}entity|file|{f}: ", f"{_INSPECT}entity|file|-: ")
        lines = stderr.splitlines()
        problems = [ln for ln in lines if ln.strip() and not ln.startswith(_INSPECT)]
        if code != 0 or problems:
            detail = "; ".join(problems) or stderr.strip() or "no error output"
            raise ScanFailed(f"{TOOL} failed on rule {rule.id} (exit {code}): {detail[:1_000]}")
        summary = next((m for m in map(_SUMMARY.match, lines) if m), None)
        if summary is None:
            raise ScanFailed(f"{TOOL} did not report what it scanned for rule {rule.id}: {stderr[:500]!r}")
        rules = next((m for m in map(_RULES.match, lines) if m), None)
        if rules is None or rules.group(1) != "1":
            raise ScanFailed(f"{TOOL} did not apply rule {rule.id}: {stderr[:500]!r}")
        scanned, skipped = int(summary.group(1)), int(summary.group(2))
        unseen = sorted((f for f, why in reasons.items() if why and why != "emptyFile"), key=str)
        if unseen or skipped > sum(1 for why in reasons.values() if why):
            where = ", ".join(f"{f} ({reasons[f]})" for f in unseen[:3]) or _largest(self.root, batch)
            raise RequiresHuman(
                f"{TOOL} skipped {skipped} file(s) for rule {rule.id}, so the rules cannot see into {where}",
                hint="split the file, or migrate it by hand",
            )
        if scanned != len(batch):
            raise ScanFailed(f"{TOOL} scanned {scanned} of {len(batch)} file(s) for rule {rule.id}")


class _Budget:
    """Bytes of JSON still allowed for one rule's scan."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.left = cap


@dataclass
class _Read:
    count: int = 0  # matches of this process
    complete: bool = False  # read to the end of the stream
    over: str | None = None  # over the byte budget: the file of the last match read ("" when none)


def _read_stream(
    rule: Rule, stream: IO[bytes], found: dict[str, list[Hit]], budget: _Budget, limit: int
) -> _Read:
    """One JSON object per line, within the byte budget; only the fields the tool needs are kept."""
    read, last = _Read(), ""
    while True:
        line = stream.readline(budget.left + 1)
        if not line:
            read.complete = True
            return read
        budget.left -= len(line)
        if budget.left < 0:
            read.over = last
            return read
        hit = _hit(rule, line)
        if hit is None:
            continue
        found.setdefault(hit.file, []).append(hit)
        last = hit.file
        read.count += 1
        if read.count >= limit:
            return read


def _hit(rule: Rule, line: bytes) -> Hit | None:
    try:
        m = json.loads(line)
        if m.get("ruleId", rule.id) != rule.id:
            return None
        offsets = m.get("replacementOffsets") or m["range"]["byteOffset"]
        return Hit(
            rule_id=rule.id,
            file=str(m["file"]).removeprefix("./"),
            line=int(m["range"]["start"]["line"]) + 1,
            start=int(offsets["start"]),
            end=int(offsets["end"]),
            replacement=m.get("replacement"),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ScanFailed(f"{TOOL} printed a match the tool cannot read for rule {rule.id}: {exc}") from exc


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


def _skip_reason(stderr: str, name: str) -> str | None:
    """Why ast-grep skipped a file (`--inspect entity`: "sg: entity|file|NAME: skipped=REASON"), or None."""
    marker = f"{_INSPECT}entity|file|{name}: skipped="
    at = stderr.find(marker)
    if at < 0:
        return None
    rest = stderr[at + len(marker) :]
    return rest.split("\n", 1)[0].strip() or "unknown"


def _head(handle: IO[bytes], limit: int) -> str:
    handle.seek(0)
    return handle.read(limit).decode("utf-8", "replace")
