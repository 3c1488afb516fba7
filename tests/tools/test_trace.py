"""trace.jsonl: every call recorded, secrets redacted before the line is written, long fields cut."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_codemod.tools.trace import REDACTED, Redactor, Trace

# Token-shaped fakes are assembled at runtime so no scanner mistakes this file for a leak.
FAKES = {
    "aws": "AKIA" + "Q" * 16,
    "gitlab": "glpat-" + "x1" * 10,
    "github": "ghp_" + "A1b2" * 9,
    "github_pat": "github_pat_" + "11AB" * 12,
    "jwt": "eyJ" + "hbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiIxIn0" + "." + "c2lnbmF0dXJl",
    "openai": "sk-" + "proj-" + "Z9" * 12,
    "slack": "xoxb-" + "1234567890-abc",
}


@pytest.mark.parametrize("kind", sorted(FAKES))
def test_token_shapes_are_redacted(kind: str) -> None:
    text = f"log: token {FAKES[kind]} used"
    redacted = Redactor().redact(text)
    assert FAKES[kind] not in redacted
    assert REDACTED in redacted


def test_private_key_block_is_redacted_whole() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----"
    redacted = Redactor().redact(f"before\n{block}\nafter")
    assert "MIIEow" not in redacted and "before" in redacted and "after" in redacted


def test_an_unterminated_private_key_block_is_redacted_to_the_end() -> None:
    assert "MIIEow" not in Redactor().redact("-----BEGIN PRIVATE KEY-----\nMIIEow")


def test_bearer_tokens_and_url_passwords_are_redacted() -> None:
    redactor = Redactor()
    assert "abc.def-ghi" not in redactor.redact("Authorization: Bearer abc.def-ghi")
    redacted = redactor.redact("pip install -i https://user:hunter22@pypi.example/simple pkg")
    assert "hunter22" not in redacted and "user:" in redacted


def test_values_of_secret_named_environment_variables_are_redacted() -> None:
    environ = {
        "CI_JOB_TOKEN": "abcdef123456",
        "my_api_key": "zyxwvu987",
        "PATH": "/usr/bin",
        "DB_PASSWORD": "x",
    }
    redactor = Redactor.from_environment(environ)
    out = redactor.redact("job abcdef123456 key zyxwvu987 path /usr/bin pw x")
    assert "abcdef123456" not in out and "zyxwvu987" not in out
    assert "/usr/bin" in out  # not a secret name
    assert "pw x" in out  # shorter than MIN_SECRET_CHARS: redacting it would shred the trace


def test_assignments_to_secret_names_are_redacted() -> None:
    out = Redactor().redact('DB_PASSWORD=hunter2hunter2\napi-key: "abcdef1234"\nname = "value123"')
    assert "hunter2hunter2" not in out and "abcdef1234" not in out
    assert 'name = "value123"' in out


def test_redact_value_walks_nested_structures() -> None:
    nested = {"a": [FAKES["aws"], {"b": (FAKES["gitlab"],)}], "n": 3, "ok": True}
    assert Redactor().redact_value(nested) == {"a": [REDACTED, {"b": [REDACTED]}], "n": 3, "ok": True}


def test_record_writes_one_json_line_per_call(tmp_path: Path) -> None:
    path = tmp_path / "run" / "trace.jsonl"
    trace = Trace(path, Redactor())
    first = trace.record("coder", "read", {"path": "src/app.py"}, "read 10 bytes")
    trace.record("coder", "write", {"path": ".env"}, "", decision="refused", reason="secret file")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines == trace.lines()
    assert [line["seq"] for line in lines] == [1, 2]
    assert first == lines[0]
    assert set(first) >= {"time", "seq", "actor", "tool", "arguments", "result", "decision", "reason"}
    assert lines[1]["decision"] == "refused" and lines[1]["reason"] == "secret file"
    assert trace.refusals() == [lines[1]]


def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    secret = "s3cr3t-value-42"
    trace = Trace(tmp_path / "t.jsonl", Redactor([secret]))
    trace.record(
        "coder", "write", {"content": f"x = '{secret}' {FAKES['github']}"}, f"echo {secret}", reason=secret
    )
    text = (tmp_path / "t.jsonl").read_text()
    assert secret not in text and FAKES["github"] not in text


def test_long_fields_are_cut_after_redaction(tmp_path: Path) -> None:
    trace = Trace(tmp_path / "t.jsonl", Redactor(), field_chars=64)
    token = FAKES["gitlab"]
    # the token straddles the cut: redaction first means no half of it survives
    line = trace.record("coder", "write", {"content": "a" * 20 + token + "b" * 500}, "r" * 1000)
    assert len(line["result"]) <= 64 and "chars cut" in line["result"]
    assert len(line["arguments"]["content"]) <= 64
    assert token[:10] not in json.dumps(line)


def test_unknown_decision_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        Trace(None).record("a", "b", {}, "", decision="maybe")  # type: ignore[arg-type]


def test_memory_trace_keeps_lines() -> None:
    trace = Trace(None)
    trace.record("a", "b", None, "ok")
    assert trace.lines()[0]["tool"] == "b"
    assert trace.path is None


def test_non_json_arguments_are_stringified(tmp_path: Path) -> None:
    trace = Trace(tmp_path / "t.jsonl")
    trace.record("a", "b", {"path": tmp_path, "n": 1.5}, "ok")
    assert trace.lines()[0]["arguments"] == {"path": str(tmp_path), "n": 1.5}


def test_secret_query_parameters_are_redacted() -> None:
    out = Redactor().redact("GET https://api.example/v1?user=me&access_token=abcdef123456 200")
    assert "abcdef123456" not in out and "user=me" in out


@pytest.mark.parametrize(
    "unit", ["a.", "token.", "eyJ", "password_", "ghp_", "://a:", "bearer ", "x-api-key "]
)
def test_redaction_terminates_on_hostile_input(unit: str) -> None:
    """A hostile model controls tool arguments; redaction must not be a denial-of-service lever. This is a
    hang guard (catastrophic backtracking took 93 s here once), not a speed test: bench/redaction.py
    prints how redaction time grows with input size."""
    code = (
        "import sys; from agentic_codemod.tools.trace import Redactor;"
        f"text = {unit!r} * (256_000 // {len(unit)});"
        "out = Redactor(['abcdefgh']).redact(text); print(len(out) > 0)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "True"
