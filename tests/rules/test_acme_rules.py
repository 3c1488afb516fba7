"""The acme-sdk-2-migration rules, one before/after string at a time, through the real ast-grep CLI.

Every rule has at least one case that changes code and one that must not. Cases where `after` is
None are "no change" cases: the rule must neither rewrite nor report the code.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
RULES_DIR = ROOT / "fixtures/packages/acme-sdk-2-migration/.apm/skills/acme-sdk-2-migration/rules"
ACME_APP_SRC = ROOT / "fixtures/acme-app/src"
RULE_FILES = sorted(RULES_DIR.glob("*.yml"))
RULE_KEYS = {"id", "language", "severity", "message", "metadata", "rule", "constraints", "fix", "note"}
AST_GREP = (
    shutil.which("ast-grep", path=str(Path(sys.executable).parent)) or shutil.which("ast-grep") or "ast-grep"
)


def rule_file(rule_id: str) -> Path:
    (path,) = [path for path in RULE_FILES if path.name.startswith(f"{rule_id}-")]
    return path


def scan(rule_id: str, target: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    command = [AST_GREP, "scan", "--rule", str(rule_file(rule_id)), *flags, str(target)]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)


def apply(rule_id: str, source: str, tmp_path: Path) -> str:
    target = tmp_path / "case.py"
    target.write_text(source)
    result = scan(rule_id, target, "-U")
    assert result.returncode == 0, result.stderr
    return target.read_text()


def findings(rule_id: str, source: str, tmp_path: Path) -> list[dict]:
    target = tmp_path / "case.py"
    target.write_text(source)
    result = scan(rule_id, target, "--json=compact")
    return json.loads(result.stdout or "[]")


def case(rule_id: str, before: str, after: str | None, name: str):
    return pytest.param(
        rule_id, dedent(before), None if after is None else dedent(after), id=f"{rule_id}-{name}"
    )


CASES = [
    case(
        "ACME001",
        "from acme.errors import NotFound\n",
        "from acme.exceptions import NotFound\n",
        "from-import",
    ),
    case(
        "ACME001",
        "from acme.errors import AcmeError, NotFound as Missing\n",
        "from acme.exceptions import AcmeError, NotFound as Missing\n",
        "from-import-many",
    ),
    case(
        "ACME001",
        """\
        import acme.errors

        try:
            pass
        except acme.errors.AcmeError:
            pass
        """,
        """\
        import acme.exceptions

        try:
            pass
        except acme.exceptions.AcmeError:
            pass
        """,
        "module-import-and-attribute",
    ),
    case(
        "ACME001", "from myapp.acme.errors import NotFound\nfrom acme import errors\n", None, "other-modules"
    ),
    case("ACME002", "from acme import errors\n", "from acme import exceptions as errors\n", "plain"),
    case(
        "ACME002",
        "from acme import Client, errors\n",
        "from acme import Client, exceptions as errors\n",
        "in-list",
    ),
    case("ACME002", "from acme import Client\nfrom myapp import errors\n", None, "other-names-and-modules"),
    case(
        "ACME003",
        """\
        from acme.utils import paginate

        for order in paginate(self._client, "/orders", page_size=page_size):
            pass
        """,
        """\
        from acme.utils import paginate

        for order in self._client.paginate("/orders", page_size=page_size):
            pass
        """,
        "imported-helper",
    ),
    case(
        "ACME003",
        "import acme.utils\n\nitems = list(acme.utils.paginate(client, path))\n",
        "import acme.utils\n\nitems = list(client.paginate(path))\n",
        "qualified-helper",
    ),
    case(
        "ACME003", "from myapp.utils import paginate\n\npages = paginate(rows, 10)\n", None, "other-paginate"
    ),
    case(
        "ACME004",
        "import os\nfrom acme.utils import paginate\n\nx = 1\n",
        "import os\n\n\nx = 1\n",
        "delete-import",
    ),
    case("ACME004", "from myapp.utils import paginate\nfrom acme import Client\n", None, "other-imports"),
    case(
        "ACME005",
        'client = acme.Client(url, timeout=5)\nbody = client.fetch("/a", timeout=2.0)\n',
        'client = acme.Client(url, timeout_s=5)\nbody = client.fetch("/a", timeout_s=2.0)\n',
        "client-and-fetch",
    ),
    case(
        "ACME005",
        "Client(url, timeout=t)\nself._client.send(path, body, timeout=30)\nclient.get(p, timeout=1)\n",
        "Client(url, timeout_s=t)\nself._client.send(path, body, timeout_s=30)\nclient.get(p, timeout_s=1)\n",
        "imported-client-send-get",
    ),
    case(
        "ACME005",
        "requests.get(url, timeout=5)\ncache.fetch(key, timeout=1)\nmake_client(url, timeout=3)\n",
        None,
        "other-calls",
    ),
    case("ACME006", 'body = client.fetch("/orders/1")\n', 'body = client.get("/orders/1")\n', "local-client"),
    case(
        "ACME006",
        'body = self._client.fetch(f"/orders/{n}", params={"a": 1})\n',
        'body = self._client.get(f"/orders/{n}", params={"a": 1})\n',
        "attribute-client",
    ),
    case(
        "ACME006",
        'cache.fetch("k")\nclient.fetch_all()\nclient_pool.fetch()\nmethod = getattr(client, "fetch")\n',
        None,
        "other-receivers",
    ),
    case("ACME007", "t = min(2.0, self._client.timeout)\n", "t = min(2.0, self._client.timeout_s)\n", "read"),
    case("ACME007", "t = settings.timeout\nclient.timeout_s\nclient.timeout(3)\n", None, "other-attributes"),
    case("ACME900", "getattr(client, 'fetch')\n", None, "literal-is-flagged-not-fixed"),
    case("ACME900", "getattr(config, name)\nclient.get('/x')\n", None, "other-objects"),
]
FLAGGED = {"ACME900-literal-is-flagged-not-fixed"}


@pytest.mark.parametrize(("rule_id", "before", "after"), CASES)
def test_rule_case(rule_id: str, before: str, after: str | None, tmp_path: Path, request) -> None:
    result = apply(rule_id, before, tmp_path)
    assert result == (before if after is None else after)
    found = findings(rule_id, before, tmp_path)
    if after is None and request.node.callspec.id not in FLAGGED:
        assert found == []
    else:
        assert found and {item["ruleId"] for item in found} == {rule_id}


def test_detect_only_rule_flags_the_dynamic_dispatch_without_a_replacement(tmp_path: Path) -> None:
    source = "OPS = {'load': 'fetch'}\nmethod = getattr(self._client, OPS[op])\n"
    (found,) = findings("ACME900", source, tmp_path)
    assert found["severity"] == "warning"
    assert "replacement" not in found
    assert found["range"]["start"]["line"] == 1


def test_every_rule_has_a_changing_and_a_no_change_case() -> None:
    for path in RULE_FILES:
        rule_id = path.name.split("-")[0]
        mine = [param.values for param in CASES if param.values[0] == rule_id]
        assert any(after is None for _, _, after in mine), f"{rule_id}: no 'no change' case"
        assert len(mine) >= 2, f"{rule_id}: needs a case that matches"


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda path: path.name)
def test_rule_file_follows_the_package_format(path: Path) -> None:
    rule = yaml.safe_load(path.read_text())
    assert set(rule) <= RULE_KEYS
    assert re.fullmatch(r"ACME\d{3}", rule["id"]) and path.name.startswith(f"{rule['id']}-")
    assert rule["language"] == "python"
    assert rule["severity"] in {"error", "warning", "info", "hint"}
    assert rule["message"].strip() and "\n" not in rule["message"]
    assert rule["metadata"]["description"].strip()
    if "fix" in rule:
        assert not rule["metadata"].get("requires_human")
    else:
        assert rule["metadata"]["requires_human"] is True


def test_rule_ids_are_unique() -> None:
    ids = [path.name.split("-")[0] for path in RULE_FILES]
    assert len(ids) == len(set(ids)) == len(RULE_FILES) >= 2


def test_paginate_rules_only_work_in_file_name_order(tmp_path: Path) -> None:
    source = "from acme.utils import paginate\n\nrows = list(paginate(client, '/orders'))\n"
    right = apply("ACME004", apply("ACME003", source, tmp_path), tmp_path)
    assert right == "\n\nrows = list(client.paginate('/orders'))\n"
    wrong = apply("ACME003", apply("ACME004", source, tmp_path), tmp_path)
    assert "paginate(client" in wrong


def test_rules_in_order_leave_only_detect_only_findings_on_the_app(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(ACME_APP_SRC, src, ignore=shutil.ignore_patterns("__pycache__"))
    for path in RULE_FILES:
        result = subprocess.run(
            [AST_GREP, "scan", "--rule", str(path), "-U", str(src)], capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
    remaining = []
    for path in RULE_FILES:
        result = subprocess.run(
            [AST_GREP, "scan", "--rule", str(path), "--json=compact", str(src)],
            capture_output=True,
            text=True,
        )
        remaining += [(item["ruleId"], Path(item["file"]).name) for item in json.loads(result.stdout or "[]")]
    assert remaining == [("ACME900", "reports.py")]
