"""installed_files.capping: what in an environment requires the SDK in a range that excludes the version the
bump installed, read from each dist-info's METADATA on the host (the end-to-end cases are in
tests/test_transitive_sdk.py)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from agentic_codemod.adapters.python.installed_files import capping
from agentic_codemod.adapters.types import VerificationEnv

SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


def env_with(tmp_path: Path, metadata: dict[str, str | bytes]) -> VerificationEnv:
    """An environment folder holding one dist-info per entry (folder name: METADATA text)."""
    for folder, text in metadata.items():
        dist = tmp_path / SITE / folder
        dist.mkdir(parents=True)
        (dist / "METADATA").write_bytes(text if isinstance(text, bytes) else text.encode())
    return VerificationEnv(interpreter=tmp_path / "bin" / "python", root=tmp_path)


def metadata(name: str, version: str, *requires: str) -> str:
    """METADATA text; an entry holding a colon before any space is a header of its own."""
    lines = "".join(f"{r}\n" if r.split(" ")[0].endswith(":") else f"Requires-Dist: {r}\n" for r in requires)
    return f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{lines}\nRequires-Dist: acme-sdk<1\n"


def test_a_requirement_excluding_the_installed_version_is_named_with_its_package(tmp_path: Path) -> None:
    env = env_with(
        tmp_path,
        {
            "acme_sdk-2.1.0.dist-info": metadata("acme-sdk", "2.1.0", "acme-sdk<2"),  # its own: never
            "acme_widgets-1.0.0.dist-info": metadata("acme-widgets", "1.0.0", "Acme_SDK (>=1.0,<2)"),
            "acme_tools-3.0.dist-info": metadata("acme-tools", "3.0", "acme-sdk>=2", "requests<3"),
            "plain-1.0.dist-info": metadata("plain", "1.0"),  # the body's line is no header: not read
        },
    )
    assert capping(env, "acme-sdk", "2.1.0", []) == ["acme-widgets 1.0.0 requires Acme_SDK (>=1.0,<2)"]
    assert capping(env, "acme-sdk", "1.4.0", []) == ["acme-tools 3.0 requires acme-sdk>=2"]


def test_markers_decide_and_a_cap_in_an_extra_counts_where_something_installed_asks_for_it(
    tmp_path: Path,
) -> None:
    """helper-50: `acme-kit` requires `acme-widgets[sdk]`, whose `acme-sdk<2; extra == "sdk"` was read with no
    extra: "verified" nothing_to_do, exit 0, on a set uv refuses. An extra nothing asks for says nothing
    (helper-51: counting every provided extra flagged jedi's `[dev]` pytest<9 in every pytest bump)."""
    env = env_with(
        tmp_path,
        {
            "a-1.dist-info": metadata("a", "1", 'acme-sdk<2; python_version < "3"'),  # not this interpreter
            "b-1.dist-info": metadata("b", "1", 'acme-sdk<2; extra == "legacy"', "Provides-Extra: legacy"),
            "c-1.dist-info": metadata("c", "1", 'acme-sdk<2; python_version >= "3"'),
            "d-1.dist-info": metadata("d", "1", 'acme-sdk<2; extra == "dev"', "Provides-Extra: dev"),
            "kit-1.dist-info": metadata("kit", "1", "B[Legacy]>=1"),
        },
    )
    assert capping(env, "acme-sdk", "2.1.0", []) == [
        'b 1 requires acme-sdk<2; extra == "legacy" (with its extra legacy, if the install asks for it)',
        'c 1 requires acme-sdk<2; python_version >= "3"',
    ]


def test_a_folded_header_is_one_requirement_and_an_unreadable_one_naming_the_sdk_counts(
    tmp_path: Path,
) -> None:
    """helper-50: `Requires-Dist: acme-sdk` folded onto ` <2` is acme-sdk<2 to uv (it refuses the set), and
    was acme-sdk to a line-by-line reading: "succeeded", exit 0."""
    env = env_with(
        tmp_path,
        {
            "folded-1.dist-info": metadata("folded", "1", "acme-sdk\n <2"),
            "garbled-1.dist-info": metadata("garbled", "1", "acme-sdk <<2"),
            "other-1.dist-info": metadata("other", "1", "requests <<2"),  # garbled, but not on acme-sdk
            "worded-1.dist-info": metadata("worded", "1", "=?utf-8?q?acme-sdk=3C2?="),  # uv decodes it
        },
    )
    assert capping(env, "acme-sdk", "2.1.0", []) == [
        "folded 1 requires acme-sdk <2",
        "garbled 1 requires acme-sdk <<2 (a requirement no parser reads)",
        "worded 1 requires acme-sdk<2",
    ]


def test_a_url_requirement_and_an_unreadable_metadata_count(tmp_path: Path) -> None:
    env = env_with(
        tmp_path,
        {
            "u-1.dist-info": metadata("u", "1", "acme-sdk @ https://example.invalid/acme_sdk-1.4.0.whl"),
            "x-1.dist-info": b"\xff\xfe not utf-8",
        },
    )
    found = capping(env, "acme-sdk", "2.1.0", [])
    assert found[0] == "u 1 requires acme-sdk @ https://example.invalid/acme_sdk-1.4.0.whl", found
    assert found[1].startswith("x-1.dist-info: its METADATA cannot be read"), found
    assert len(found) == 2


def test_the_repositorys_own_project_is_left_out_only_for_a_range_it_declared_itself(tmp_path: Path) -> None:
    """Its METADATA holds the declarations as they were before the bump edited them. A registry wheel that
    ships a direct_url.json of its own claiming a folder (helper-50: `succeeded`, exit 0) is not one."""
    env = env_with(
        tmp_path,
        {
            "app-1.0.dist-info": metadata("app", "1.0", "acme-sdk<2,>=1"),
            "lib-1.0.dist-info": metadata("lib", "1.0", "acme-sdk<2"),
        },
    )
    own = tmp_path / SITE / "app-1.0.dist-info" / "direct_url.json"
    own.write_text('{"url": "file:///codemod/repo", "dir_info": {"editable": true}}')
    forged = tmp_path / SITE / "lib-1.0.dist-info" / "direct_url.json"
    forged.write_text('{"url": "file:///src", "dir_info": {}}')
    assert capping(env, "acme-sdk", "2.1.0", [">=1,<2"]) == ["lib 1.0 requires acme-sdk<2"]
    assert capping(env, "acme-sdk", "2.1.0", ["^1"]) == ["lib 1.0 requires acme-sdk<2"]  # Poetry's, as built
    assert capping(env, "acme-sdk", "2.1.0", ["==1.4.0"]) == [
        "app 1.0 requires acme-sdk<2,>=1",
        "lib 1.0 requires acme-sdk<2",
    ]


def test_holding_reads_what_the_host_sees_whatever_a_listing_said(tmp_path: Path) -> None:
    """installed_files.holding: the evidence install_repository asks for before it calls the SDK absent."""
    from agentic_codemod.adapters.python.installed_files import holding

    env = env_with(tmp_path, {"acme_widgets-1.0.dist-info": metadata("acme-widgets", "1.0", "acme-sdk")})
    (tmp_path / SITE / "acme").mkdir()  # what is left of acme-sdk where its dist-info was taken away
    (tmp_path / SITE / "acme" / "__init__.py").write_text("")
    assert holding(env.root, "acme-sdk", ["acme"]) == [
        "acme, which no installed distribution's RECORD lists",
        "acme_widgets-1.0.dist-info requires acme-sdk",
    ]


def test_holding_is_empty_where_nothing_holds_it_and_a_listed_namesake_is_no_evidence(tmp_path: Path) -> None:
    from agentic_codemod.adapters.python.installed_files import holding

    env = env_with(
        tmp_path,
        {
            "other-1.0.dist-info": metadata("other", "1.0", 'acme-sdk; extra == "cloud"'),  # not asked for
            "acme_tools-1.0.dist-info": metadata("acme-tools", "1.0"),
        },
    )
    (tmp_path / SITE / "acme" / "tools").mkdir(parents=True)  # acme-tools' portion of the acme namespace
    (tmp_path / SITE / "acme" / "tools" / "__init__.py").write_text("")
    (tmp_path / SITE / "acme_tools-1.0.dist-info" / "RECORD").write_text("acme/tools/__init__.py,,\n")
    assert holding(env.root, "acme-sdk", ["acme"]) == []
    (tmp_path / SITE / "acme_sdk-1.4.0.dist-info").mkdir()
    assert holding(env.root, "acme-sdk", ["acme"]) == ["acme_sdk-1.4.0.dist-info"]


def test_a_cap_in_an_extra_the_repositorys_own_install_asks_for_counts(tmp_path: Path) -> None:
    """`acme-widgets[sdk]` in requirements.txt, `.[test]` or `-e ./plugin[sdk]`: the extra is asked outside
    any installed METADATA (env.extras, install_plan.asked_extras), and its cap was not read: the run was
    `succeeded`, exit 0, on a set uv refuses. An extra asked of one project is not asked of another."""
    env = env_with(
        tmp_path,
        {
            "acme_widgets-1.0.dist-info": metadata(
                "acme-widgets", "1.0", 'acme-sdk<2; extra == "sdk"', "Provides-Extra: sdk"
            ),
            "app-1.0.dist-info": metadata("app", "1.0", 'helper[old]; extra == "test"'),
            "plugin-1.0.dist-info": metadata("plugin", "1.0", 'acme-sdk<1.5; extra == "sdk"'),
            "helper-1.0.dist-info": metadata("helper", "1.0", 'acme-sdk<1.9; extra == "old"'),
            "other-1.0.dist-info": metadata("other", "1.0", 'acme-sdk<1.8; extra == "test"'),
        },
    )
    for folder, where in (("app-1.0", "codemod/repo"), ("plugin-1.0", "codemod/repo/plug%20in")):
        direct_url = tmp_path / SITE / f"{folder}.dist-info" / "direct_url.json"
        direct_url.write_text(f'{{"url": "file:///{where}", "dir_info": {{"editable": true}}}}')
    assert capping(env, "acme-sdk", "2.1.0", []) == []
    env = replace(env, extras={"acme-widgets": ["sdk"], ".": ["test"], "./plug in": ["sdk"]})
    asked = ", if the install asks for it)"
    assert capping(env, "acme-sdk", "2.1.0", []) == [
        f'acme-widgets 1.0 requires acme-sdk<2; extra == "sdk" (with its extra sdk{asked}',
        f'helper 1.0 requires acme-sdk<1.9; extra == "old" (with its extra old{asked}',
        f'plugin 1.0 requires acme-sdk<1.5; extra == "sdk" (with its extra sdk{asked}',
    ]


def test_extras_an_unnamed_url_asks_for_count_for_what_was_installed_from_a_url(tmp_path: Path) -> None:
    """helper-53: `git+https://host/w[sdk]` (uv reads the extras) names no distribution: its extras count
    for each one installed from a URL outside the repository, never for one from the index."""
    cap = ('acme-sdk<2; extra == "sdk"',)
    env = env_with(
        tmp_path, {f"{d}-1.0.dist-info": metadata(d, "1.0", *cap) for d in ("from-git", "indexed")}
    )
    direct_url = tmp_path / SITE / "from-git-1.0.dist-info" / "direct_url.json"
    direct_url.write_text('{"url": "https://example.invalid/acme/w", "vcs_info": {"vcs": "git"}}')
    assert capping(replace(env, extras={"url:": ["sdk"]}), "acme-sdk", "2.1.0", []) == [
        'from-git 1.0 requires acme-sdk<2; extra == "sdk" (with its extra sdk, if the install asks for it)'
    ]


def test_a_platform_release_marker_counts_as_installers_compare_it(tmp_path: Path) -> None:
    """helper-51: packaging finds `platform_release >= "5"` false on a release like 6.18.44-generic (no PEP
    440 version), where PEP 508's comparison (and uv) holds it: a cap uv reads went unseen, exit 0. (The
    release is this machine's; its leading version decides the comparisons, as it does for installers.)"""
    import platform
    import re

    release = platform.release()
    major = int(re.match(r"\d+", release).group(0))  # type: ignore[union-attr]
    env = env_with(
        tmp_path,
        {
            "new-1.dist-info": metadata("new", "1", f'acme-sdk<2; platform_release >= "{major}"'),
            "old-1.dist-info": metadata("old", "1", f'acme-sdk<2; platform_release < "{major}"'),
            "exact-1.dist-info": metadata("exact", "1", f'acme-sdk<2; platform_release == "{release}"'),
        },
    )
    assert capping(env, "acme-sdk", "2.1.0", []) == [
        f'exact 1 requires acme-sdk<2; platform_release == "{release}"',
        f'new 1 requires acme-sdk<2; platform_release >= "{major}"',
    ]
