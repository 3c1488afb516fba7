"""An SDK the repository neither declares nor imports, but installs through another package (the corpus'
flask1-markupsafe21: Flask 1.1.4 gets MarkupSafe only through Jinja2 2.x, which MarkupSafe 2.1 breaks).

Before, every such repository ended `nothing_to_do`, exit 0, with no install and no test run: a false
success wherever `to` breaks the package in between. Now the repository's dependencies are installed alone
first; only an environment without the SDK ends the run untested, and one with it runs the tests on both
versions (verify only, nothing edited)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures_support import wheel

pytestmark = pytest.mark.slow

# acme.errors exists in acme-sdk 1.x only (2.x renamed it acme.exceptions).
BROKEN_ON_2 = "from acme.errors import *  # noqa: F403\n\n\ndef ready():\n    return True\n"
FINE_ON_BOTH = "import acme\n\n\ndef ready():\n    return bool(acme.__version__)\n"
TEST = "import acme_widgets\n\n\ndef test_widgets_are_ready():\n    assert acme_widgets.ready()\n"


def through_widgets(make_repo, run_codemod, tmp_path: Path, module: str, requires: str = "acme-sdk", **more):
    """The acme-sdk-2 task's run on widgets_repo(...)."""
    repo, house = widgets_repo(make_repo, tmp_path, module, requires, **more)
    return run_codemod(repo, "acme-sdk-2.yml", "--find-links", str(house))


def widgets_repo(
    make_repo,
    tmp_path: Path,
    module: str,
    requires: str = "acme-sdk",
    declared: str = "",
    asked: str = "acme-widgets==1.0.0",
    files: dict[str, str] | None = None,
    kit: str = "",
) -> tuple[Path, Path]:
    """A repository declaring `asked` (and `declared` before it), whose acme-widgets wheel requires
    `requires` and holds `module` (and `files`), beside an acme-kit wheel requiring `kit`; and the folder
    of those wheels."""
    house = tmp_path / "widgets-house"
    house.mkdir()
    shipped = {"acme_widgets/__init__.py": module, **(files or {})}
    wheel(house, "acme_widgets", "1.0.0", requires=(requires,), files=shipped)
    wheel(house, "acme_kit", "1.0.0", requires=(kit,) if kit else ())
    repo = make_repo(
        "through-widgets",
        {
            "requirements.txt": f"{declared}{asked}\n",
            "src/acme_app": None,
            "tests": None,
            "tests/test_widgets.py": TEST,
        },
    )
    return repo, house


def test_an_sdk_another_package_installs_is_tested_on_both_versions_and_a_break_needs_a_human(
    make_repo, run_codemod, tmp_path: Path
):
    """Exit 0, `nothing_to_do`, with no test run before (the widget breaks on acme-sdk 2.1.0)."""
    result = through_widgets(make_repo, run_codemod, tmp_path, BROKEN_ON_2)
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert "tests fail on acme-sdk 2.1.0" in m["reason"] and "verify only" in m["reason"], m["reason"]
    plan = result.json("plan.json")
    assert plan["verify_only"] and plan["if_installed"] and not plan["nothing_to_do"], plan
    assert m["environments"]["baseline"]["acme-sdk"] == "1.4.0"  # put on `from` beside acme-widgets
    assert m["environments"]["after"]["acme-sdk"] == "2.1.0"
    assert result.artifact("changes.patch").read_bytes() == b""


def test_an_sdk_another_package_installs_is_verified_where_it_works_on_both(
    make_repo, run_codemod, tmp_path: Path
):
    result = through_widgets(make_repo, run_codemod, tmp_path, FINE_ON_BOTH)
    m = result.manifest
    assert (result.code, m["status"]) == (0, "nothing_to_do"), m["reason"]
    assert "verified on acme-sdk 2.1.0: 1 test(s) pass there" in m["reason"], m["reason"]
    assert [v["phase"] for v in m["verifications"]] == ["baseline", "iteration-1"]


def test_a_repository_whose_install_brings_no_sdk_has_nothing_to_do_without_a_test_run(
    make_repo, run_codemod
):
    repo = make_repo(
        "no-sdk-installed",
        {
            "requirements.txt": "pytest\n",
            "src/acme_app": None,
            "tests": None,
            "tests/test_sdk_free.py": "def test_x():\n    pass\n",
        },
    )
    result = run_codemod(repo, "acme-sdk-2.yml")
    m = result.manifest
    assert (result.code, m["status"]) == (0, "nothing_to_do"), m["reason"]
    assert "bring no acme-sdk in" in m["reason"], m["reason"]
    assert "acme-sdk" not in m["environments"]["baseline"] and "pytest" in m["environments"]["baseline"]
    assert m["verifications"] == [] and "after" not in m["environments"]


def test_a_package_that_caps_the_sdk_below_the_target_needs_a_human_though_the_tests_pass(
    make_repo, run_codemod, tmp_path: Path
):
    """acme-widgets 1.0.0 requires acme-sdk<2: the bump's install put 2.1.0 beside it anyway (installers
    keep what is installed), the tests passed, and the run ended `succeeded`, exit 0, with a requirements.txt
    (`acme-sdk==2.1.0`, `acme-widgets==1.0.0`) no installer can resolve."""
    result = through_widgets(
        make_repo, run_codemod, tmp_path, FINE_ON_BOTH, "acme-sdk<2", declared="acme-sdk==1.4.0\n"
    )
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert "acme-widgets 1.0.0 requires acme-sdk<2" in m["reason"], m["reason"]
    assert m["verifications"][-1]["passed"] and m["environments"]["after"]["acme-sdk"] == "2.1.0"


def test_an_sdk_only_a_capping_package_installs_is_no_verified_nothing_to_do(
    make_repo, run_codemod, tmp_path: Path
):
    """Declared nowhere, installed by acme-widgets, which requires acme-sdk<2: the tests pass on 2.1.0 put
    beside it, but the repository's own install never takes 2.1.0 while acme-widgets 1.0.0 caps it."""
    result = through_widgets(make_repo, run_codemod, tmp_path, FINE_ON_BOTH, "acme-sdk<2")
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert m["reason"].startswith(
        "the tests pass on acme-sdk 2.1.0 with no change, but: acme-widgets 1.0.0 requires"
    )
    assert [v["passed"] for v in m["verifications"]] == [True, True]


@pytest.mark.parametrize(
    ("requires", "more", "named"),
    [
        ("acme-sdk\n <2", {}, "acme-widgets 1.0.0 requires acme-sdk <2"),
        (
            'acme-sdk<2; extra == "sdk"\nProvides-Extra: sdk',
            {"asked": "acme-kit==1.0.0", "declared": "", "kit": "acme-widgets[sdk]==1.0.0"},
            'acme-widgets 1.0.0 requires acme-sdk<2; extra == "sdk" (with its extra sdk',
        ),
        (
            'acme-sdk<2; extra == "sdk"\nProvides-Extra: sdk',
            {"asked": "acme-widgets[sdk]==1.0.0"},
            'acme-widgets 1.0.0 requires acme-sdk<2; extra == "sdk" (with its extra sdk',
        ),
        (
            "acme-sdk<2",
            {
                "files": {
                    "acme_widgets-1.0.0.dist-info/direct_url.json": '{"url": "file:///src", "dir_info": {}}'
                }
            },
            "acme-widgets 1.0.0 requires acme-sdk<2",
        ),
    ],
    ids=[
        "a-folded-header",
        "in-an-extra-a-dependency-asks-for",
        "in-an-extra-requirements-txt-asks-for",
        "a-wheel-claiming-a-folder",
    ],
)
def test_a_cap_the_installer_reads_is_read_however_the_wheel_spells_it(
    make_repo, run_codemod, tmp_path: Path, requires: str, more: dict, named: str
):
    """helper-50: each of these caps held acme-sdk below 2.1.0 for uv (which refuses the set), yet the run
    ended `succeeded` or "verified" `nothing_to_do`, exit 0: a header folded onto a continuation line read
    line by line, a cap in an extra acme-kit asks for read with no extra, a wheel shipping a
    direct_url.json that claimed a folder taken for the repository's own project. And a cap in an extra
    only the repository's requirements.txt asks for (`acme-widgets[sdk]`), outside any installed
    metadata, was not read."""
    more = {"declared": "acme-sdk==1.4.0\n", **more}
    result = through_widgets(make_repo, run_codemod, tmp_path, FINE_ON_BOTH, requires, **more)
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert named in m["reason"], m["reason"]
    assert m["verifications"][-1]["passed"] and m["environments"]["after"]["acme-sdk"] == "2.1.0"
    if more.get("asked", "").startswith("acme-widgets[sdk]"):  # what the cap was read by, for the auditor
        assert m["installs"]["after"]["extras_asked"] == "acme-widgets[sdk]", m["installs"]
