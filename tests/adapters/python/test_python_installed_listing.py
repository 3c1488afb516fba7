"""The environment listing read directly (installed_listing.py) is the listing importlib.metadata gives, in a
real interpreter's environment of each shape; anything the direct reading does not model goes to
importlib.metadata, and an environment neither can read still fails the listing (fail closed)."""

from __future__ import annotations

import email
import json
import random
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from agentic_codemod.adapters.python import installed_listing
from agentic_codemod.adapters.python.environment import installed_versions, listing_program
from agentic_codemod.adapters.types import ProcessResult, VerificationEnv

# Both listings of the interpreter this runs in, and whether the direct one read it itself.
_PROGRAM = listing_program()
_COMPARE = (
    _PROGRAM.replace("if __name__ == '__main__':\n    main()", "")
    + "\ntry:\n    fast, how = direct(), 'direct'\nexcept Unusual as exc:\n    fast, how = None, str(exc)\n"
    "print(json.dumps({'direct': fast, 'how': how, 'importlib': by_importlib()}))\n"
)


def _site(env: Path) -> Path:
    return next((env / "lib").glob("python3*/site-packages"))


def _python(env: Path) -> Path:
    return env / "bin" / "python"


def _dist(where: Path, dirname: str, metadata: str | bytes, file: str = "METADATA") -> None:
    info = where / dirname
    info.mkdir(parents=True)
    data = metadata if isinstance(metadata, bytes) else metadata.encode()
    (info / file).write_bytes(data)


def _compare(env: Path, tmp_path: Path) -> dict[str, object]:
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    proc = subprocess.run(
        [str(_python(env)), "-I", "-c", _COMPARE], cwd=cwd, capture_output=True, text=True, check=True
    )
    return dict(json.loads(proc.stdout))


def _fresh(tmp_path: Path) -> Path:
    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    return env


def _meta(name: str, version: str, extra: str = "") -> str:
    head = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{extra}"
    return head + "\nA long description: with: colons\n"


def test_plain_environment_is_read_directly_and_equals_importlib(tmp_path: Path) -> None:
    env = _fresh(tmp_path)
    site = _site(env)
    _dist(site, "Acme_SDK-1.4.0.dist-info", _meta("Acme_SDK", "1.4.0"))
    _dist(site, "zope.interface-6.0.dist-info", _meta("zope.interface", "6.0"))
    _dist(site, "tabs-1.dist-info", "name:\t Tabs..Dots__x \nVERSION:  1.0 \nSummary: x\n\tfolded summary\n")
    _dist(site, "twice-1.dist-info", "Name: Twice\nVersion: 1\nName: Other\nVersion: 2\n")
    _dist(site, "cafe-1.dist-info", _meta("Café_Crème", "1", "Author: Zoë \x0b\x1c\u2028 x\n"))
    found = _compare(env, tmp_path)
    assert found["how"] == "direct"
    assert found["direct"] == found["importlib"]
    assert found["direct"]["acme-sdk"] == "1.4.0"  # type: ignore[index]
    assert found["direct"]["tabs-dots-x "] == "1.0 "  # type: ignore[index]  # email keeps trailing blanks
    assert found["direct"]["twice"] == "1"  # type: ignore[index]  # the first header is the one read


def test_a_name_on_two_sys_path_entries_gives_the_same_winner(tmp_path: Path) -> None:
    env = _fresh(tmp_path)
    site, extra = _site(env), tmp_path / "extra"
    extra.mkdir()
    _dist(site, "acme_sdk-1.4.0.dist-info", _meta("acme-sdk", "1.4.0"))
    _dist(extra, "acme_sdk-2.0.0.dist-info", _meta("acme-sdk", "2.0.0"))
    _dist(site, "Acme.SDK-1.5.dist-info", _meta("ACME.sdk", "1.5"))  # same group, same directory
    (site / "extra.pth").write_text(f"{extra}\n")
    found = _compare(env, tmp_path)
    assert found["how"] == "direct"
    assert found["direct"] == found["importlib"]


@pytest.mark.parametrize(
    ("shape", "reason"),
    [
        ("folded-name", "folded"),
        ("egg-info", "egg-info"),
        ("zip-on-path", "file (a zip)"),
        ("pkg-info-only", "unreadable METADATA"),
        ("empty-metadata", "no Name"),
        ("non-ascii-key", "would not read"),
        ("hook", "import hook"),
        ("not-a-header", "would not read"),
        ("no-version", "no Name or no Version"),
        ("content-type", "Content-Type"),
    ],
)
def test_shapes_the_direct_reading_does_not_model_go_to_importlib(
    tmp_path: Path, shape: str, reason: str
) -> None:
    env = _fresh(tmp_path)
    site = _site(env)
    _dist(site, "plain-1.dist-info", _meta("plain", "1"))
    if shape == "folded-name":
        _dist(site, "fold-1.dist-info", "Name: fold\n ed\nVersion: 1\n")
    elif shape == "egg-info":
        _dist(site, "old-1.0.egg-info", "Metadata-Version: 1.0\nName: old\nVersion: 1.0\n", file="PKG-INFO")
    elif shape == "zip-on-path":
        import zipfile

        archive = tmp_path / "zipped.zip"
        with zipfile.ZipFile(archive, "w") as z:
            z.writestr("zipped-3.dist-info/METADATA", _meta("zipped", "3"))
        (site / "zipped.pth").write_text(f"{archive}\n")
    elif shape == "pkg-info-only":
        _dist(site, "legacy-2.dist-info", _meta("legacy", "2"), file="PKG-INFO")
    elif shape == "empty-metadata":
        _dist(site, "empty-2.dist-info", "")
    elif shape == "non-ascii-key":
        _dist(site, "cafe-1.dist-info", "Name: cafe\nVersion: 1\nAuteuré: x\n")
    elif shape == "hook":
        (site / "hooked.py").write_text(
            "import importlib.metadata as m, sys\n"
            "class Dist(m.Distribution):\n"
            "    def read_text(self, f):\n"
            "        return 'Name: from-a-hook\\nVersion: 9\\n' if f == 'METADATA' else None\n"
            "    def locate_file(self, p):\n"
            "        return p\n"
            "class Finder:\n"
            "    @staticmethod\n"
            "    def find_spec(*a, **k):\n"
            "        return None\n"
            "    @staticmethod\n"
            "    def find_distributions(context=None):\n"
            "        return [Dist()]\n"
            "sys.meta_path.append(Finder)\n"
        )
        (site / "hooked.pth").write_text("import hooked\n")
    elif shape == "not-a-header":
        _dist(site, "odd-1.dist-info", "Name: odd\nVersion: 1\nnot a header line\nName: later\n")
    elif shape == "content-type":
        _dist(site, "mime-1.dist-info", "Name: mime\nVersion: 1\nContent-Type: text/plain\n\nbody\n")
    elif shape == "no-version":
        _dist(site, "nover-1.dist-info", "Name: nover\n")
    found = _compare(env, tmp_path)
    assert found["direct"] is None and reason in str(found["how"]), found
    listed = subprocess.run(
        [str(_python(env)), "-I", "-c", _PROGRAM], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert json.loads(listed.stdout) == found["importlib"]  # the program prints importlib's listing
    if shape == "hook":
        assert found["importlib"]["from-a-hook"] == "9"  # type: ignore[index]


def _runner(argv: list[str], cwd: Path, timeout_s: float, **_: object) -> ProcessResult:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout_s, check=False)
    return ProcessResult(argv, proc.returncode, 0.0, proc.stdout + proc.stderr)


NESTED = "Content-Type: message/rfc822\n\n" * 3000


@pytest.mark.parametrize(
    "metadata",
    [b"Name: bad\nVersion: 1\n\n\xff\xfe not utf-8", f"Name: deep\nVersion: 1\n{NESTED}".encode()],
    ids=["not-utf-8", "nested-message-bodies"],
)
def test_an_environment_the_old_listing_could_not_read_still_fails_the_listing(
    tmp_path: Path, metadata: bytes
) -> None:
    """A METADATA that made importlib.metadata fail (not UTF-8; a body of nested messages that email parses
    into a RecursionError) still fails the listing: installed_versions is None, never a partial dict."""
    env = _fresh(tmp_path)
    _dist(_site(env), "acme_sdk-1.4.0.dist-info", _meta("acme-sdk", "1.4.0"))
    _dist(_site(env), "bad-1.dist-info", metadata)
    venv_env = VerificationEnv(root=env, interpreter=_python(env))
    assert installed_versions(tmp_path, venv_env, _runner) is None


def test_modules_at_the_listing_directory_cannot_stand_in_for_the_standard_library(tmp_path: Path) -> None:
    """The repository's own json.py or __future__.py where the listing runs would print any version they
    like if the listing's directory were on its sys.path (python -c puts it first; -I does not)."""
    env = _fresh(tmp_path)
    _dist(_site(env), "acme_sdk-1.4.0.dist-info", _meta("acme-sdk", "1.4.0"))
    root = tmp_path / "repo-copy"
    root.mkdir()
    forge = 'import sys\nprint(\'{"acme-sdk": "2.0.0"}\')\nsys.exit(0)\n'
    for name in ("json.py", "__future__.py", "re.py", "os.py", "importlib.py"):
        (root / name).write_text(forge)
    _dist(root, "acme_sdk-2.0.0.dist-info", _meta("acme-sdk", "2.0.0"))  # nor its dist-info directories
    venv_env = VerificationEnv(root=env, interpreter=_python(env))
    forged = subprocess.run(
        [str(_python(env)), "-c", listing_program()], cwd=root, capture_output=True, text=True, check=False
    )
    assert json.loads(forged.stdout.splitlines()[-1]) == {"acme-sdk": "2.0.0"}  # what -c alone would list
    assert installed_versions(root, venv_env, _runner) == {"acme-sdk": "1.4.0"}


def test_header_fields_read_what_email_reads_on_random_header_blocks() -> None:
    """Every block header_fields accepts, email.message_from_string reads the same Name and Version from."""
    keys = ["Name", "name", "NAME", "Version", "version", "Summary", "X-y", "From x", "", "Na me", "Nämé"]
    seps = [":", ": ", ":\t", " :", "", "::"]
    values = ["a", " b ", "1.0", "\tz", "é", "", "c:d", "2 ", "\x0b", "\x1c", "\x85", "\u2028", "\r", "\x00"]
    prefixes = ["", "", "", "", " ", "\t"]
    rng = random.Random(1312)
    accepted = 0
    for _ in range(20000):
        lines = [
            rng.choice(prefixes) + rng.choice(keys) + rng.choice(seps) + rng.choice(values)
            for _ in range(rng.randint(0, 5))
        ]
        for key in ("Name", "Version"):  # each block has a candidate of each, shaped at random
            line = rng.choice([key, key.lower()]) + ": " + rng.choice(values)
            lines.insert(rng.randint(0, len(lines)), line)
        if rng.random() < 0.3:
            lines.insert(rng.randint(0, len(lines)), "")  # the end of the header block
        text = "\n".join(lines) + rng.choice(["", "\n", "\n\nbody: x\n"])
        try:
            name, version = installed_listing.header_fields(text)
        except installed_listing.Unusual:
            continue
        accepted += 1
        message = email.message_from_string(text)
        assert (message["Name"], message["Version"]) == (name, version), repr(text)
    assert accepted > 200  # the comparison ran on blocks the direct reading accepts


def test_canonical_is_the_regex_it_replaces() -> None:
    import re

    for name in ["Acme_SDK", "a--b", "-x-", "zope.interface", "A._-B", "", "__", "x.", "ÄÖ_ü"]:
        assert installed_listing.canonical(name) == re.sub(r"[-_.]+", "-", name).lower()


def test_the_program_is_the_module_without_its_docstrings() -> None:
    assert "__main__" in _PROGRAM and "__main__" not in _COMPARE  # the comparison does not run main()
    assert len(_PROGRAM) < 4000  # the trace holds the argv
    assert '"""' not in _PROGRAM and "#" not in _PROGRAM


def test_the_program_runs_in_the_tool_interpreter_too() -> None:
    proc = subprocess.run([sys.executable, "-c", _PROGRAM], capture_output=True, text=True, check=True)
    assert "pytest" in json.loads(proc.stdout)


def test_a_listing_line_nested_past_the_parsers_depth_fails_the_listing(tmp_path: Path) -> None:
    """Code in the environment (a .pth a package installed) can print after the listing: a last line of
    `[[[[…` nested past json's depth fails the listing (None), not the run with a RecursionError."""
    env = _fresh(tmp_path)
    _dist(_site(env), "acme_sdk-1.4.0.dist-info", _meta("acme-sdk", "1.4.0"))
    (_site(env) / "deep.pth").write_text("import atexit; atexit.register(print, '[' * 100000)\n")
    venv_env = VerificationEnv(root=env, interpreter=_python(env))
    assert installed_versions(tmp_path, venv_env, _runner) is None
