"""Where the rules match: ast-grep over the repository's source files, bounded, cached, fail-closed.

    Scanner(root, settings).scan(rules) -> {rule id: [Hit]}   every match of every rule, one ast-grep pass
    Scanner(root, settings).scan(rules, files=edited)         the same, re-scanning only the edited files
    Scanner(root, settings).matches(rule) -> [Hit]            one rule
    source_files(root, language) -> [path]                    what git lists (so .gitignore applies)

One pass applies all the rules at once: one `git ls-files` per phase, each file parsed once per content.
The rules go to ast-grep as copies in a directory of ours named by a config file of ours (`-c`), so an
`sgconfig.yml` in the repository cannot remap languages or add rules. File names are data: each goes to
ast-grep as `./name` after `--`, in batches sized from the system's argument-length limit (SC_ARG_MAX less
the environment and the fixed arguments, a quarter kept back; `scan.max_argv_bytes` caps it): one listing,
any number of files, never over the limit; a name with a line break goes alone (its line in the report
could otherwise forge another name's). ast-grep runs with `--info`, so its exit code means only
failure; and with `--inspect entity`, so a file it skipped (too large) or could not read is seen. Its
JSON is read as a stream (`--json=stream`) and only what the tool needs of each match is kept. Results
are cached per (rule, file, content identity): a file that did not change since the last scan of the
same rule is not scanned again (plan, codemod and the final gate share one Scanner). A phase lists the
files once (`scan(rules)`); the codemod step re-scans only the files an earlier rule edited
(`scan(rules, files=...)`), which is what keeps "each rule sees the result of the ones before it".

A file's content identity is its status (device, inode, size, mtime, ctime) when both times are older
than RACY_NS, so a file that did not change is never read by this process, only by ast-grep: any later
write sets ctime to the time of the write, which no program can set back. A file changed more recently
is read and identified by a digest of its bytes (file times tick coarsely, so two same-size writes within
one tick look alike: git's "racily clean" entries), until it is old enough to be known by its status.

Failures are never "no matches":
    ast-grep exits non-zero, prints an error, or scans fewer files than given  -> ScanFailed (exit 1)
    ast-grep skips a file (fileTooLarge), or a cap is exceeded                  -> RequiresHuman (exit 3)
    a file name in the repository is not UTF-8                                  -> RequiresHuman (exit 3)
    the environment leaves no room on ast-grep's command line for file names   -> EnvironmentUnavailable (75)
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable
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
    breaks_lines,
    checked_report,
    read_stream,
    shown_rules,
)

if TYPE_CHECKING:
    from agentic_codemod.workflow.codemod import Rule

RACY_NS = 2_000_000_000  # a file changed this recently is re-read, never trusted by its status
_POINTER = 8  # each argument and environment string also costs its pointer in the new process's argv/envp
_POSIX_ARG_MAX = 4_096  # where the system does not say (sysconf fails): the least POSIX allows
_ARG_EXTRA = 3 + _POINTER  # a file name's "./", its NUL and its pointer
_ROOM_NEEDED = 2 * (4_096 + 3 + _POINTER)  # room for at least two names of PATH_MAX bytes


def ast_grep_binary() -> str:
    beside = Path(sys.executable).parent / TOOL
    found = str(beside) if beside.exists() else shutil.which(TOOL)
    if not found:
        raise EnvironmentUnavailable("ast-grep is not installed", hint="pip install ast-grep-cli")
    return found


def source_suffixes(language: str) -> tuple[str, ...]:
    """The file suffixes a rule `language` scans (an adapter's ast-grep language: python, javascript,
    typescript, tsx), or, for an ecosystem's name, all of that ecosystem's source suffixes."""
    from agentic_codemod.adapters import registry

    adapters = registry()
    for adapter in adapters.values():
        if language in adapter.test_facts.ast_grep_languages:
            return adapter.test_facts.ast_grep_languages[language]
    return adapters[language].test_facts.source_suffixes if language in adapters else ()


def source_files(root: Path, language: str) -> list[str]:
    """Tracked and untracked (not ignored) regular source files, repo-relative, sorted.
    RequiresHuman when any name git lists is not UTF-8: no tool step can name such a file safely."""
    return [name for name, _ in _listed(root, language)]


def _listed(root: Path, language: str) -> list[tuple[str, os.stat_result]]:
    """source_files with each file's status (one lstat a file)."""
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
    suffixes = source_suffixes(language)
    base = os.fspath(root)
    found: list[tuple[str, os.stat_result]] = []
    regular = stat.S_ISREG
    for name in sorted(dict.fromkeys(n for n in names if n.endswith(suffixes))):
        st = _listed_lstat(f"{base}/{name}", name)
        if st is not None and regular(st.st_mode):  # no symlinks: their target is scanned as itself
            found.append((name, st))
    return found


@dataclass
class _Entry:
    """What the scans found in one content of one file: the rules it was scanned with, their matches."""

    scanned: frozenset[str] = frozenset()  # shared by the entries one scan made (never mutated)
    hits: dict[str, list[Hit]] = field(default_factory=dict)  # only rules with matches


@dataclass
class Scanner:
    root: Path
    settings: ScanSettings = field(default_factory=ScanSettings)
    runs: int = 0  # ast-grep processes started (the cache is what keeps this low)
    _cache: dict[tuple[str, str], _Entry] = field(default_factory=dict)  # (file, identity) -> found
    _listing: dict[str, dict[str, str]] = field(default_factory=dict)  # language -> {file: identity}
    _identities: dict[tuple[int, ...], str] = field(default_factory=dict)  # file status -> identity
    _racy: dict[str, tuple[tuple[int, ...], str]] = field(default_factory=dict)  # file -> (status, digest)
    # language -> rules that every file of its listing was scanned with (a re-scan looks at changes only)
    _covered: dict[str, set[str]] = field(default_factory=dict)

    def matches(self, rule: Rule) -> list[Hit]:
        return self.scan([rule])[rule.id]

    def scan(self, rules: list[Rule], files: list[str] | None = None) -> dict[str, list[Hit]]:
        """Every match of every rule in the source files, in file order. `files=None` lists the files
        anew (one `git ls-files`); otherwise only those files are looked at again (edited, created or
        deleted since the last listing) and the rest of the last listing stands."""
        out: dict[str, list[Hit]] = {}
        for language in dict.fromkeys(r.language for r in rules):
            group = [r for r in rules if r.language == language]
            covered = self._covered.pop(language, set())
            listing, changed = self._list(language, files)
            ids = {r.id for r in group}
            # Every other file was scanned with these rules already: look only at the changed ones.
            candidates = changed if changed is not None and ids <= covered else listing
            cache = self._cache
            todo = [
                f for f in candidates if (e := cache.get((f, listing[f]))) is None or not ids <= e.scanned
            ]
            if todo:
                self._scan(group, todo, listing)
            self._covered[language] = ids | (covered if changed == [] else set())
            found = self._collect(ids, listing.items())
            for rule in group:
                self._cap_matches(rule.id, found[rule.id])
                out[rule.id] = found[rule.id]
        return out

    def _collect(self, ids: set[str], files: Iterable[tuple[str, str]]) -> dict[str, list[Hit]]:
        """The cached matches of these rules in these (file, digest)s, in file order."""
        out: dict[str, list[Hit]] = {i: [] for i in ids}
        for entry in map(self._cache.get, files):  # (the loop over every listed file, kept lean)
            if entry is not None and entry.hits:
                for rule_id, hits in entry.hits.items():
                    if rule_id in out:
                        out[rule_id].extend(hits)
        return out

    def _list(self, language: str, files: list[str] | None) -> tuple[dict[str, str], list[str] | None]:
        """{file: identity} in file order, and the files whose identity is new since the last listing
        (None: a new listing, every file counts as new). Updating for `files` costs what they cost."""
        if files is None or language not in self._listing:
            known = self._identities  # the usual case inline: a file seen before, unchanged
            listing = {
                f: known.get((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
                or self._identity(f, st)
                for f, st in _listed(self.root, language)
            }
            self._listing[language] = listing
            return listing, None
        listing = self._listing[language]
        suffixes = source_suffixes(language)
        changed: list[str] = []
        added = False
        for f in sorted(set(files)):
            if not f.endswith(suffixes):
                continue
            st = _listed_lstat(f"{os.fspath(self.root)}/{f}", f)
            if st is None or not stat.S_ISREG(st.st_mode):
                listing.pop(f, None)
                continue
            identity = self._identity(f, st)
            added = added or f not in listing
            if listing.get(f) != identity:
                listing[f] = identity
                changed.append(f)
        if added:  # a new name: keep the listing in file order
            listing = self._listing[language] = dict(sorted(listing.items()))
        return listing, changed

    def _identity(self, rel: str, st: os.stat_result) -> str:
        """What the cache knows this content of the file by (see the module's docstring): its status
        when its times are older than RACY_NS, else a digest of its bytes. A file first read while it
        was recent is read once more when it has aged with the same status, so that its cached results
        carry over."""
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        known = self._identities.get(key)
        if known is not None:
            return known
        aged = max(st.st_mtime_ns, st.st_ctime_ns) < time.time_ns() - RACY_NS
        racy = self._racy.get(rel)
        if aged and (racy is None or racy[0] != key):
            identity = "status:" + ":".join(map(str, key))
        else:
            identity = _digest(f"{os.fspath(self.root)}/{rel}")
        if aged:
            self._identities[key] = identity
            self._racy.pop(rel, None)
        else:
            self._racy[rel] = (key, identity)
        return identity

    def _cap_matches(self, rule_id: str, hits: list[Hit]) -> None:
        cap = self.settings.max_matches_per_rule
        if len(hits) > cap:
            where, n = Counter(h.file for h in hits).most_common(1)[0]
            raise RequiresHuman(
                f"rule {rule_id} matches more than {cap} times (scan.max_matches_per_rule); "
                f"most in {where} ({n})",
                hint="a change of this size needs a human plan; or raise scan.max_matches_per_rule",
            )

    def _scan(self, rules: list[Rule], files: list[str], listing: dict[str, str]) -> None:
        """One ast-grep process per batch of files, each with all the rules; the cache gets every
        (rule, file) of the batch, with or without matches."""
        todo = set(files)
        ids = {r.id for r in rules}
        before = self._collect(ids, ((f, d) for f, d in listing.items() if f not in todo))
        for rule in rules:
            self._cap_matches(rule.id, before[rule.id])
        left = {r.id: self.settings.max_matches_per_rule - len(before[r.id]) for r in rules}
        found: dict[tuple[str, str], list[Hit]] = {}
        budget = Budget(self.settings.max_output_bytes, [r.id for r in rules])
        with tempfile.TemporaryDirectory(prefix="codemod-scan-") as tmp:
            config = _config(Path(tmp), rules)
            argv = [ast_grep_binary(), "scan", "-c", str(config), "--json=stream"]
            # --info: every rule reports at one severity, so the exit code says only whether the tool
            # failed (error-level matches exit 1; "severity: off" would skip the rule).
            argv += ["--info", "--inspect", "entity", "--"]
            for batch in _batches(files, argv_room(self.settings.max_argv_bytes, argv)):
                capped = self._run(rules, argv, batch, found, budget, left)
                if capped is not None:
                    more = [h for (rule_id, _), hits in found.items() if rule_id == capped for h in hits]
                    self._cap_matches(capped, before[capped] + more)
        by_file: dict[str, dict[str, list[Hit]]] = {}
        for (rule_id, f), hits in found.items():
            by_file.setdefault(f, {})[rule_id] = sorted(hits, key=_position)
        scanned = frozenset(ids)
        for f in files:
            key = (f, listing[f])
            entry = self._cache.get(key)
            if entry is None:  # the usual case: one entry for all these rules, their matches as found
                self._cache[key] = _Entry(scanned, by_file.get(f, {}))
                continue
            entry.scanned = entry.scanned | scanned
            for rule_id in ids:
                entry.hits.pop(rule_id, None)
            entry.hits.update(by_file.get(f, {}))

    def _run(
        self,
        rules: list[Rule],
        fixed: list[str],
        batch: list[str],
        found: dict[tuple[str, str], list[Hit]],
        budget: Budget,
        left: dict[str, int],
    ) -> str | None:
        argv = [*fixed, *(f"./{f}" for f in batch)]
        ids = [r.id for r in rules]
        shown = shown_rules(ids)
        self.runs += 1
        timed_out = threading.Event()
        with tempfile.TemporaryFile() as errors:
            try:
                proc = subprocess.Popen(
                    argv, cwd=self.root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors
                )
            except OSError as exc:
                raise ScanFailed(f"{TOOL} could not start for rule {shown}: {exc}") from exc

            def stop() -> None:
                timed_out.set()
                proc.kill()

            timer = threading.Timer(self.settings.timeout_s, stop)
            timer.start()
            read = Read()
            try:
                assert proc.stdout is not None
                read = read_stream(proc.stdout, found, budget, left)
            finally:
                if not read.complete and proc.poll() is None:
                    proc.kill()  # the tool stopped reading (a cap, an error): the scanner must not linger
                code = proc.wait()
                timer.cancel()
                if proc.stdout is not None:
                    proc.stdout.close()
            # the inspect report: a line per file (its name and about 60 bytes) and per rule, a summary
            # (a name's UTF-8 is at most 4 bytes a character)
            stderr = _head(errors, 4 * sum(map(len, batch)) + 100 * (len(batch) + len(rules)) + 65_536)
        if timed_out.is_set():
            raise RequiresHuman(
                f"rule {shown}: {TOOL} did not finish within {self.settings.timeout_s:.0f}s "
                f"(scan.timeout_s) on {len(batch)} file(s), the largest {_largest(self.root, batch)}",
                hint="raise scan.timeout_s, or migrate this repository by hand",
            )
        if read.over is not None:
            raise RequiresHuman(
                f"rule {read.over_rule or shown}: {TOOL} printed more than {budget.cap} bytes of matches "
                f"(scan.max_output_bytes), in {read.over or _largest(self.root, batch)}",
                hint="a match of this size needs a human; or raise scan.max_output_bytes",
            )
        if read.capped is not None:
            return read.capped  # more matches than the cap allows: the caller names the rule and the file
        skipped, named = checked_report(ids, batch, code, stderr)
        if skipped:
            where = ", ".join(f"{f} ({why})" for f, why in sorted(named.items())[:3])
            raise RequiresHuman(
                f"{TOOL} skipped {skipped} file(s) for rule {shown}, so the rules cannot see into "
                + (where or _largest(self.root, batch)),
                hint="split the file, or migrate it by hand",
            )
        return None


def _config(tmp: Path, rules: list[Rule]) -> Path:
    """Our ast-grep config: a directory holding a copy of each rule file, nothing else."""
    rules_dir = tmp / "rules"
    rules_dir.mkdir()
    for index, rule in enumerate(rules):
        # The text read at load_rules: a concurrent `apm install` replacing the installed package (new
        # files under apm_modules/) cannot make a later scan miss or change a rule.
        target = rules_dir / f"{index:05d}.yml"
        if rule.text is not None:
            target.write_text(rule.text, encoding="utf-8")
        else:
            shutil.copyfile(rule.path, target)
    config = tmp / "sgconfig.yml"
    config.write_text(f"ruleDirs: [{json.dumps(str(rules_dir))}]\n", encoding="utf-8")
    return config


def _position(hit: Hit) -> tuple[int, int]:
    return hit.start, hit.end


def argv_room(cap: int, fixed: list[str], arg_max: int | None = None) -> int:
    """Bytes of file-name arguments (as `_arg_bytes` counts them) one process may be given: the system's
    limit on arguments and environment together (SC_ARG_MAX, or `arg_max`), less the environment this
    process passes on and the fixed arguments, a quarter of the rest kept back; at most `cap`
    (scan.max_argv_bytes). EnvironmentUnavailable when that leaves no room for a long file name."""
    if arg_max is None:
        try:
            arg_max = os.sysconf("SC_ARG_MAX")
        except (OSError, ValueError):
            arg_max = -1
        if arg_max <= 0:
            arg_max = _POSIX_ARG_MAX
    used = sum(len(k) + len(v) + 2 + _POINTER for k, v in os.environb.items())
    used += sum(len(os.fsencode(a)) + 1 + _POINTER for a in fixed) + 2 * _POINTER  # two NULL ends
    room = (arg_max - used) * 3 // 4
    if room < _ROOM_NEEDED:
        raise EnvironmentUnavailable(
            f"the environment leaves {max(room, 0)} bytes of the argument-length limit ({arg_max}, "
            f"SC_ARG_MAX) for the names of the files to scan; {_ROOM_NEEDED} are needed",
            hint="run with a smaller environment, or a larger stack limit (ulimit -s)",
        )
    return min(cap, room)


def _arg_bytes(name: str) -> int:
    """What one file name costs on the command line: "./", its bytes, the NUL and its argv pointer."""
    return len(name.encode("utf-8")) + _ARG_EXTRA


def _batches(files: list[str], room: int) -> list[list[str]]:
    """Consecutive runs of files whose names fit in `room`; a name longer than `room` goes alone (room is
    then the cap of scan.max_argv_bytes: argv_room leaves the system's limit room for two names of
    PATH_MAX bytes), and so does a name with a line break (its report line could forge another's)."""
    batches: list[list[str]] = [[]]
    size = 0
    for f in files:
        if breaks_lines(f):  # alone
            batches.append([f])
            batches.append([])
            size = 0
            continue
        n = len(f.encode("utf-8")) + _ARG_EXTRA  # _arg_bytes(f), inline: once per listed file
        if batches[-1] and size + n > room:
            batches.append([])
            size = 0
        batches[-1].append(f)
        size += n
    return [b for b in batches if b]


def _digest(path: str) -> str:
    h = hashlib.blake2b(digest_size=20)
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _regular(path: Path | str) -> bool:
    st = _lstat(path)
    return st is not None and stat.S_ISREG(st.st_mode)  # no symlinks: their target is scanned as itself


def _lstat(path: Path | str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _listed_lstat(path: str, name: str) -> os.stat_result | None:
    """lstat of a listed file. None when it is gone (deleted, or a parent is no longer a directory): it is
    not scanned. One that is there but cannot be looked at (permissions, a name too long, a loop) is a
    file the rules cannot see into: RequiresHuman naming it, never "no matches"."""
    try:
        return os.lstat(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise RequiresHuman(
            f"the rules cannot see into {name!r}: {exc.strerror or exc}",
            hint="make the file readable to the tool (or move it), or migrate it by hand",
        ) from exc


def _largest(root: Path, files: list[str]) -> str:
    sizes = {f: os.lstat(root / f).st_size for f in files if _regular(root / f)}
    return max(sizes, key=lambda f: sizes[f]) if sizes else (files[0] if files else "?")


def _head(handle: IO[bytes], limit: int) -> str:
    handle.seek(0)
    return handle.read(limit).decode("utf-8", "replace")
