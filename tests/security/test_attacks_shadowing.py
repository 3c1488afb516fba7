"""A copy of the SDK inside the repository, where the tests import it before the installed one: the
red-team's reproduction (a vendored `src/acme/` on the fixture's `pythonpath = ["src"]`, or a `tests/acme/`
package pytest's rootdir insertion puts first) was green on the copy's code, exit 0, while run.json named
acme-sdk 2.0.0. End to end through the CLI (offline, the rules-only task)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

TASK = "acme-sdk-2-rules.yml"
COPY = "from acme.client import Client  # a vendored copy, patched to take the old names too\n"


@pytest.mark.parametrize(
    ("files", "named"),
    [
        ({"src/acme/__init__.py": COPY, "src/acme/client.py": "class Client: ...\n"}, "src/acme/"),
        ({"tests/acme/__init__.py": COPY}, "tests/acme/"),
        ({"acme.py": COPY}, "acme.py"),
    ],
    ids=["src-package", "tests-package", "root-module"],
)
def test_attack_a_copy_of_the_sdk_in_the_repository_is_never_what_a_green_run_tested(
    make_repo, run_codemod, files: dict[str, str], named: str
) -> None:
    result = run_codemod(make_repo("vendored-sdk", files), TASK)
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert "holds its own copy of what acme-sdk installs" in m["reason"] and named in m["reason"]
    assert [v["phase"] for v in m["verifications"]] == []  # no test ran on the copy
    assert result.artifact("changes.patch").read_bytes() == b""


def test_a_module_of_the_sdks_name_inside_a_package_is_no_copy(make_repo, run_codemod) -> None:
    """`acme_app/acme.py` is `acme_app.acme`, never the top-level `acme`: the run goes on as without it."""
    result = run_codemod(make_repo("submodule", {"src/acme_app/acme.py": "X = 1\n"}), TASK)
    assert (result.code, result.manifest["status"]) == (0, "succeeded"), result.manifest["reason"]
