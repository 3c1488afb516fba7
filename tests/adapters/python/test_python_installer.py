"""uv as the installer (exact argv, pip where uv does not start, byte-compiled venvs) and the runner's
environment templates (built once per dependency set, copied per run, never writable by a repository)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from agentic_codemod.adapters.python import env_template, installer, pip_config, seed
from agentic_codemod.adapters.python.environment import install_dependencies, prepare_environment
from agentic_codemod.adapters.python.install_plan import InstallPlan
from agentic_codemod.adapters.types import Runner
from agentic_codemod.config import MOVED_TO_PACKAGES, PackageSources, PythonEnvSettings, Settings
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.sandbox import Policy, install_cache_of, probe
from agentic_codemod.tools.verification import SandboxRunner

needs_uv = pytest.mark.skipif(installer.find_uv() is None, reason="uv is not installed (the `uv` extra)")
needs_bwrap = pytest.mark.skipif(probe() is not None, reason=f"bubblewrap cannot start here: {probe()}")
SEED = seed.find()  # this interpreter's ensurepip wheels
SEEDED = SEED.label if SEED is not None else seed.NONE
BUILD_SYSTEM = '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    return root


def settings(**python: object) -> Settings:
    """Settings from the run options' names (index_url, find_links, no_index: the package sources)."""
    sources = {new: python.pop(old) for old, new in MOVED_TO_PACKAGES.items() if old in python}
    packages = PackageSources.model_validate(sources)
    return Settings(packages=packages, python=PythonEnvSettings.model_validate(python))


def test_uv_reads_no_repository_config_byte_compiles_and_copies_from_the_per_run_cache(
    tmp_path: Path,
) -> None:
    uv = installer.Installer("uv", "/opt/uv", "0.13.9")
    plan = InstallPlan(requirement_files=["requirements.txt"], project=".", requirements=["pytest"])
    config = settings(index_url="https://pypi.example/simple", find_links=["/wheels"], no_index=True)
    assert uv.install_command(tmp_path / "bin/python", config, plan, tmp_path / "cache") == [
        "/opt/uv", "pip", "install", "--python", str(tmp_path / "bin/python"), "--no-config",
        "--compile-bytecode", "--link-mode", "copy", "--no-progress", "--cache-dir", str(tmp_path / "cache"),
        "--no-index", "--index-url", "https://pypi.example/simple", "--find-links", "/wheels",
        "-r", "requirements.txt", "-e", ".", "--", "pytest",
    ]  # fmt: skip
    assert uv.venv_command(tmp_path / "env") == [
        "/opt/uv", "venv", "--quiet", "--no-config", "--relocatable", "--python", sys.executable,
        str(tmp_path / "env"),
    ]  # fmt: skip


def test_an_install_whose_bytecode_the_host_writes_compiles_nothing(tmp_path: Path) -> None:
    plan = InstallPlan(requirements=["tinypkg==0.2.0"], reinstall=["tinypkg"], host_compiles=True)
    uv = installer.Installer("uv", "/opt/uv", "0.13.9")
    assert uv.install_command(tmp_path / "bin/python", settings(), plan, tmp_path / "cache") == [
        "/opt/uv", "pip", "install", "--python", str(tmp_path / "bin/python"), "--no-config",
        "--link-mode", "copy", "--no-progress", "--cache-dir", str(tmp_path / "cache"),
        "--reinstall-package", "tinypkg", "--", "tinypkg==0.2.0",
    ]  # fmt: skip
    pip = installer.PIP.install_command(tmp_path / "bin/python", settings(), plan, None)
    assert pip[pip.index("install") + 1 :] == [
        "--disable-pip-version-check", "--no-input", "--no-compile", "--force-reinstall", "--no-deps",
        "--", "tinypkg==0.2.0",
    ]  # fmt: skip


def test_the_seed_installs_the_interpreters_own_wheels_offline_without_bytecode(tmp_path: Path) -> None:
    bundled = seed.Seed(tmp_path / "_bundled", (("setuptools", "65.5.0"), ("pip", "23.2.1")))
    python = tmp_path / "env/bin/python"
    uv = installer.Installer("uv", "/opt/uv", "0.13.9")
    assert uv.seed_command(python, bundled, tmp_path / "cache") == [
        "/opt/uv", "pip", "install", "--python", str(python), "--no-config", "--link-mode", "copy",
        "--no-progress", "--cache-dir", str(tmp_path / "cache"),
        "--no-index", "--find-links", str(tmp_path / "_bundled"), "setuptools==65.5.0", "pip==23.2.1",
    ]  # fmt: skip
    assert installer.PIP.seed_command(python, bundled, None) == [
        sys.executable, "-P", "-m", "pip", "--isolated", "--python", str(python), "install",
        "--disable-pip-version-check", "--no-input", "--no-compile",
        "--no-index", "--find-links", str(tmp_path / "_bundled"), "setuptools==65.5.0", "pip==23.2.1",
    ]  # fmt: skip
    assert bundled.label == "setuptools 65.5.0, pip 23.2.1"


def test_the_callers_pip_config_reaches_uv_as_variables_with_credentials_off_the_command_line() -> None:
    caller = {
        "index-url": "https://user:s3cret@mirror.example/simple",
        "extra-index-url": "https://a.example/simple  https://b.example/simple",
        "trusted-host": "mirror.example a.example",
        "proxy": "http://proxy.example:3128",
        "timeout": "30",
        "retries": "2",
    }
    env = pip_config.uv_env(caller, {"cert": ".codemod-pip/cert.pem"})
    assert env == {
        "UV_DEFAULT_INDEX": "https://user:s3cret@mirror.example/simple",
        "UV_INDEX": "https://a.example/simple https://b.example/simple",
        "UV_INDEX_STRATEGY": "unsafe-best-match",  # pip's search: the best version over every index
        "UV_INSECURE_HOST": "mirror.example a.example",
        "HTTPS_PROXY": "http://proxy.example:3128",
        "HTTP_PROXY": "http://proxy.example:3128",
        "UV_HTTP_TIMEOUT": "30",
        "UV_HTTP_RETRIES": "2",
        "SSL_CERT_FILE": ".codemod-pip/cert.pem",
    }
    assert "s3cret" in pip_config.credentials(caller)  # what the run's redactor hides
    links = {"find-links": "/no/such/dir https://links.example/wheels", "no-index": "true"}
    expected = {"UV_FIND_LINKS": "https://links.example/wheels", "UV_NO_INDEX": "1"}
    assert pip_config.uv_env(links, {}) == expected  # a missing local dir left out, as pip ignores it
    argv = installer.Installer("uv", "uv").install_command(Path("p"), Settings(), InstallPlan(), None)
    assert not any("s3cret" in a for a in argv)


def test_pip_is_chosen_when_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    assert installer.choose(settings(installer="pip")) is installer.PIP
    monkeypatch.setattr(installer, "find_uv", lambda: None)
    assert installer.choose(settings(installer="uv")) is installer.PIP  # uv missing: pip, recorded


def assert_seeded(env_dir: Path, runner: Runner, cwd: Path) -> None:
    """pip runs in the venv as in one of `python -m venv`, and the seed was not byte-compiled."""
    if SEED is None:
        return
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    assert all((site / name).is_dir() and not list((site / name).rglob("*.pyc")) for name in SEED.uncompiled)
    done = runner([str(env_dir / "bin" / "python"), "-I", "-m", "pip", "--version"], cwd=cwd, timeout_s=60)
    assert done.ok and done.output_tail.startswith(f"pip {dict(SEED.wheels)['pip']} "), done.output_tail


def wheelhouse(tmp_path: Path, runner: Runner, versions: tuple[str, ...] = ("0.1.0",)) -> Path:
    wheels = tmp_path / "wheels"
    for version in versions:
        source = write(
            tmp_path / f"tinypkg-{version}",
            {
                "pyproject.toml": BUILD_SYSTEM + f'[project]\nname = "tinypkg"\nversion = "{version}"\n',
                "tinypkg/__init__.py": f'VERSION = "{version}"\n',
            },
        )
        argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
        result = runner([*argv, "-w", str(wheels), str(source)], cwd=tmp_path, timeout_s=120)
        assert result.ok, result.output_tail
    return wheels


@pytest.mark.slow
def test_uv_that_does_not_start_falls_back_to_pip(
    tmp_path: Path, runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = installer.Installer("uv", str(tmp_path / "no-such-uv"), "0")
    monkeypatch.setattr(installer, "find_uv", lambda: broken)
    wheels = wheelhouse(tmp_path, runner)
    repo = write(tmp_path / "repo", {"requirements.txt": "tinypkg==0.1.0\n"})
    config = settings(find_links=[str(wheels)], no_index=True, extra_test_requirements=[])

    env = prepare_environment(repo, tmp_path / "env", config, runner, [])

    assert env.install == {"installer": "pip", "template": "", "seed": SEEDED}
    assert env.install_log[0].argv[0] == broken.program and not env.install_log[0].ok
    assert all(r.ok for r in env.install_log[1:]), env.install_log[-1].output_tail
    assert env.install_log[-1].argv[:4] == [sys.executable, "-P", "-m", "pip"]
    assert "--no-compile" in env.install_log[-2].argv  # the seed, by the tool's pip
    assert_seeded(tmp_path / "env", runner, tmp_path)


@needs_uv
@pytest.mark.slow
def test_uv_installs_byte_compiled(tmp_path: Path, runner: Runner) -> None:
    wheels = wheelhouse(tmp_path, runner)
    repo = write(tmp_path / "repo", {"requirements.txt": "tinypkg==0.1.0\n"})
    config = settings(find_links=[str(wheels)], no_index=True, extra_test_requirements=[])

    env = prepare_environment(repo, tmp_path / "env", config, runner, [])

    assert env.install == {"installer": "uv", "template": "", "seed": SEEDED}  # no sandbox box: no template
    assert all(r.ok for r in env.install_log), env.install_log[-1].output_tail
    site = next((tmp_path / "env" / "lib").glob("python3*/site-packages"))
    assert list((site / "tinypkg" / "__pycache__").glob("__init__.*.pyc"))
    assert (install_cache_of(tmp_path / "env")).is_dir()
    assert_seeded(tmp_path / "env", runner, tmp_path)


@pytest.mark.slow
def test_where_python_ships_no_ensurepip_wheels_the_venv_is_made_unseeded_and_says_so(
    tmp_path: Path, runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seed, "find", lambda: None)  # Debian's python3 without python3-pip-whl
    wheels = wheelhouse(tmp_path, runner)
    repo = write(tmp_path / "repo", {"requirements.txt": "tinypkg==0.1.0\n"})
    config = settings(find_links=[str(wheels)], no_index=True, extra_test_requirements=[])

    env = prepare_environment(repo, tmp_path / "env", config, runner, [])

    assert env.install["seed"] == seed.NONE == "none: this Python ships no ensurepip wheels"
    assert all(r.ok for r in env.install_log), env.install_log[-1].output_tail
    assert len(env.install_log) == 2  # the venv, the plan: nothing seeded
    done = runner([str(env.interpreter), "-I", "-c", "import tinypkg, pip"], cwd=tmp_path, timeout_s=60)
    assert not done.ok and "No module named 'pip'" in done.output_tail


def test_the_seed_is_found_where_ensurepip_finds_it(tmp_path: Path) -> None:
    """The distribution's WHEEL_PKG_DIR when it holds every package, else the bundled wheels."""
    shared, bundled = tmp_path / "python-wheels", tmp_path / "_bundled"
    write(shared, {"pip-23.0.1-py3-none-any.whl": "", "wheel-0.38.4-py3-none-any.whl": ""})
    write(bundled, {"pip-23.2.1-py3-none-any.whl": "", "setuptools-65.5.0-py3-none-any.whl": ""})
    found = seed.first_in([shared, bundled], ("setuptools", "pip"))
    assert found == seed.Seed(bundled, (("setuptools", "65.5.0"), ("pip", "23.2.1")))
    assert seed.first_in([shared, bundled], ("pip",)) == seed.Seed(shared, (("pip", "23.0.1"),))
    assert seed.first_in([tmp_path / "stripped"], ("pip",)) is None


def test_registry_part_keeps_named_requirements_and_leaves_urls_paths_editables_and_hashes(
    tmp_path: Path,
) -> None:
    repo = write(
        tmp_path,
        {
            "requirements.txt": "-r requirements/base.txt\nrequests>=2\n-e ./lib\n"
            "evil @ https://example.invalid/evil-1.0-py3-none-any.whl\n./local-pkg\n",
            "requirements/base.txt": "-c ../constraints.txt\nacme-sdk==1.4.0 ; python_version >= '3'\n",
            "constraints.txt": "urllib3<3\n",
        },
    )
    plan = InstallPlan(
        requirement_files=["requirements.txt"], project=".", requirements=["pytest", "x @ file:///x"]
    )
    part = env_template.registry_part(repo, plan)
    assert part.requirements == ["acme-sdk==1.4.0 ; python_version >= '3'", "pytest", "requests>=2"]
    assert part.constraints == ["urllib3<3"]
    write(tmp_path, {"requirements/base.txt": "acme-sdk==1.4.0 --hash=sha256:" + "0" * 64 + "\n"})
    assert env_template.registry_part(repo, plan).empty  # hash-checked: no template at all


def test_a_linked_requirements_file_includes_from_its_own_folder_as_pip_does(tmp_path: Path) -> None:
    """helper-30's F3: requirements.txt -> sub/real.txt holding `-c pins.txt`: pip, uv and the tool's own
    reading take ./pins.txt; the template took sub/pins.txt, a file nothing else checks (a hash-checked
    ./pins.txt did not stop the template either)."""
    repo = write(
        tmp_path,
        {
            "sub/real.txt": "-c pins.txt\nacme-sdk>=1\n",
            "sub/pins.txt": "acme-sdk==9.9\n",
            "pins.txt": "idna<4\n",
        },
    )
    (repo / "requirements.txt").symlink_to("sub/real.txt")
    plan = InstallPlan(requirement_files=["requirements.txt"], project=".")
    part = env_template.registry_part(repo, plan)
    assert part.requirements == ["acme-sdk>=1"] and part.constraints == ["idna<4"]
    write(tmp_path, {"pins.txt": "idna==3.7 --hash=sha256:" + "0" * 64 + "\n"})
    assert env_template.registry_part(repo, plan).empty


def test_the_template_key_follows_requirements_wheels_seed_and_time_only_for_an_index(tmp_path: Path) -> None:
    uv = installer.Installer("uv", "uv", "0.13.9")
    part = env_template.Part(["tinypkg==0.1.0"])
    pip = seed.Seed(tmp_path / "_bundled", (("pip", "23.2.1"),))
    (tmp_path / "w").mkdir()
    local = settings(find_links=[str(tmp_path / "w")], no_index=True)
    key = env_template.template_key(part, local, uv, {}, pip, now=0)
    assert key == env_template.template_key(part, local, uv, {}, pip, now=10**9)  # local wheels: no expiry
    other = env_template.Part(["tinypkg==0.2.0"])
    assert key != env_template.template_key(other, local, uv, {}, pip, now=0)
    # a template made before the seed (or without one) is not one with pip in it
    assert key != env_template.template_key(part, local, uv, {}, None, now=0)
    newer = seed.Seed(tmp_path / "_bundled", (("pip", "24.0"),))
    assert key != env_template.template_key(part, local, uv, {}, newer, now=0)
    (tmp_path / "w" / "tinypkg-0.2.0-py3-none-any.whl").write_bytes(b"x")
    assert key != env_template.template_key(part, local, uv, {}, pip, now=0)  # the wheel dir changed
    remote = settings(env_template_ttl_s=3600)
    assert env_template.template_key(part, remote, uv, {}, pip, now=0) != env_template.template_key(
        part, remote, uv, {}, pip, now=3600
    )
    assert env_template.template_key(part, remote, uv, {"index-url": "https://a"}, pip, now=0) != (
        env_template.template_key(part, remote, uv, {}, pip, now=0)
    )


def boxed_runner(tmp_path: Path, repo: Path, env_dir: Path, wheels: Path) -> SandboxRunner:
    isolation = "sandbox" if probe() is None else "process"
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    for d in (home, tmp):
        d.mkdir(exist_ok=True)
    policy = Policy(isolation, env_dir, wheel_dirs=(wheels,), home=home, tmp=tmp)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    return SandboxRunner(env=env, tail_bytes=20_000).boxed(policy.for_install(repo))


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@needs_uv
@pytest.mark.slow
def test_a_template_is_built_once_per_dependency_set_and_copied_into_each_run(
    tmp_path: Path, runner: Runner
) -> None:
    wheels = wheelhouse(tmp_path, runner)
    config = settings(
        find_links=[str(wheels)], no_index=True, extra_test_requirements=[], cache_dir=str(tmp_path / "cache")
    )
    envs = []
    for name in ("one", "two"):
        repo = write(tmp_path / name, {"requirements.txt": "tinypkg==0.1.0\n", "app.py": ""})
        env_dir = tmp_path / f"run-{name}" / "env"
        env = prepare_environment(repo, env_dir, config, boxed_runner(tmp_path, repo, env_dir, wheels), [])
        assert all(r.ok for r in env.install_log), env.install_log[-1].output_tail
        envs.append(env)
    one, two = envs
    assert one.install["installer"] == "uv" and one.install["template"]
    assert two.install["template"] == one.install["template"]
    assert [r.argv[0] for r in two.install_log] == ["copy", installer.find_uv().program]  # type: ignore[union-attr]
    assert sorted(p.name for p in (tmp_path / "cache" / "envs").iterdir()) == [one.install["template"]]
    result = runner(
        [str(two.interpreter), "-c", "import tinypkg; print(tinypkg.VERSION)"], cwd=tmp_path, timeout_s=60
    )
    assert result.output_tail.strip() == "0.1.0"
    site = next((two.root / "lib").glob("python3*/site-packages"))
    assert list((site / "tinypkg" / "__pycache__").glob("*.pyc"))  # compiled once, in the template
    assert (site / "tinypkg" / "__init__.py").stat().st_nlink == 1  # a copy, not a hardlink
    assert one.install["seed"] == two.install["seed"] == SEEDED
    meta = json.loads((tmp_path / "cache" / "envs" / one.install["template"] / "template.json").read_text())
    assert meta["seed"] == (SEED.label if SEED else "")
    assert_seeded(two.root, runner, tmp_path)  # pip is in the template, uncompiled
    if (site / "_distutils_hack").is_dir():  # setuptools' .pth imports it in every start: compiled
        assert list((site / "_distutils_hack" / "__pycache__").glob("*.pyc"))


@needs_uv
@pytest.mark.slow
def test_a_template_or_cache_others_could_have_written_is_not_used(tmp_path: Path, runner: Runner) -> None:
    """helper-30's F2: any `envs/<key>/template.json` was taken, whoever wrote it; the key is in run.json,
    so a user (or job) who can write the cache could plant a template whose .pth rewrites test results.
    Now the cache, its envs and uv folders and the template must be this user's alone, the record must
    name the key: otherwise the run installs everything itself."""
    wheels = wheelhouse(tmp_path, runner)
    cache = tmp_path / "cache"
    config = settings(
        find_links=[str(wheels)], no_index=True, extra_test_requirements=[], cache_dir=str(cache)
    )

    def install(name: str) -> dict[str, str]:
        repo = write(tmp_path / name, {"requirements.txt": "tinypkg==0.1.0\n", "app.py": ""})
        env_dir = tmp_path / f"run-{name}" / "env"
        env = prepare_environment(repo, env_dir, config, boxed_runner(tmp_path, repo, env_dir, wheels), [])
        assert all(r.ok for r in env.install_log), env.install_log[-1].output_tail
        return env.install

    key = install("built")["template"]
    template = cache / "envs" / key
    assert install("honest").get("template") == key  # the control: a template of this user's is used
    for shared in (template, cache / "envs", cache, cache / "uv"):
        shared.chmod(0o775)  # group-writable: someone else could have put anything there
        assert not install(f"open-{shared.name}").get("template"), shared
        shared.chmod(0o755)
    meta = json.loads((template / "template.json").read_text())
    (template / "template.json").write_text(json.dumps({**meta, "key": "0" * 32}))  # renamed or planted
    assert not install("other-key").get("template")
    (template / "template.json").write_text(json.dumps(meta))
    assert install("again").get("template") == key
    if os.getuid() == 0:  # another owner, where the test may make one
        os.chown(template, 65534, 65534)
        assert not install("foreign").get("template")


BACKEND = """
import os
def _attack():
    for line in open("targets.txt").read().splitlines():
        try:
            if line.endswith("/"):
                open(os.path.join(line, "poisoned.txt"), "w").write("owned")
            else:
                open(line, "a").write("\\nVERSION = 'poisoned'\\n")
        except OSError:
            pass
def get_requires_for_build_editable(config_settings=None):
    _attack()
    raise RuntimeError("attack done")
get_requires_for_build_wheel = get_requires_for_build_editable
"""


@needs_uv
@needs_bwrap
@pytest.mark.slow
def test_a_repositorys_build_code_cannot_write_the_shared_cache_or_a_template(
    tmp_path: Path, runner: Runner
) -> None:
    wheels = wheelhouse(tmp_path, runner)
    cache = tmp_path / "cache"
    config = settings(
        find_links=[str(wheels)], no_index=True, extra_test_requirements=[], cache_dir=str(cache)
    )
    honest = write(tmp_path / "honest", {"requirements.txt": "tinypkg==0.1.0\n"})
    env_dir = tmp_path / "run-honest" / "env"
    first = prepare_environment(honest, env_dir, config, boxed_runner(tmp_path, honest, env_dir, wheels), [])
    template = cache / "envs" / first.install["template"]
    site = next((template / "lib").glob("python3*/site-packages"))
    before = tree_digest(cache)

    pyproject = '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    env_dir = tmp_path / "run-attacker" / "env"
    run_cache = install_cache_of(env_dir)  # the run's own: writable for its installs, read by the bump's
    targets = [f"{cache}/", f"{cache / 'uv'}/", f"{template}/", str(site / "tinypkg" / "__init__.py")]
    targets.append(f"{run_cache}/")
    attacker = write(
        tmp_path / "attacker",
        {
            "requirements.txt": "tinypkg==0.1.0\n",  # the same dependency set: the same template
            "pyproject.toml": pyproject + '[project]\nname = "attacker"\nversion = "1"\n',
            "backend.py": BACKEND,
            "targets.txt": "\n".join(targets) + "\n",
        },
    )
    env = prepare_environment(
        attacker, env_dir, config, boxed_runner(tmp_path, attacker, env_dir, wheels), []
    )

    assert env.install["template"] == first.install["template"]
    assert "attack done" in env.install_log[-1].output_tail  # the build code ran, in the sandbox
    assert tree_digest(cache) == before
    assert not list(cache.rglob("poisoned.txt"))
    assert run_cache.is_dir() and not list(run_cache.rglob("poisoned.txt"))  # gone before the bump's install


def test_templates_unused_for_the_keep_time_are_pruned_and_a_pruned_one_is_not_half_copied(
    tmp_path: Path,
) -> None:
    envs = tmp_path / "envs"
    for name, age in (("old", 8 * 86_400), ("recent", 3_600), ("new", 8 * 86_400)):
        write(envs / name, {"template.json": "{}", "lib/x.py": "X = 1\n"})
        os.utime(envs / name / "template.json", (1e9 - age, 1e9 - age))
    (envs / ".build-x").mkdir()  # a build in progress is never touched
    gone = env_template.prune(envs, 7 * 86_400, keep=envs / "new", now=1e9)
    assert gone == ["old"]
    assert sorted(p.name for p in envs.iterdir()) == [".build-x", "new", "recent"]
    run_env = tmp_path / "run" / "env"
    run_env.mkdir(parents=True)
    assert env_template.instantiate(envs / "old", run_env) is None and list(run_env.iterdir()) == []
    copied = env_template.instantiate(envs / "recent", run_env)
    assert copied is not None and (run_env / "lib" / "x.py").is_file()
    assert not (run_env / "template.json").exists()
    assert (envs / "recent" / "template.json").stat().st_mtime > 1e9  # used now: kept longer


def test_beyond_the_max_count_the_least_recently_copied_templates_are_pruned(tmp_path: Path) -> None:
    """A runner (or a test suite) building many dependency sets within the keep time: the cache stays at
    python.env_template_max_count templates, the one just built and the most recently copied."""
    envs = tmp_path / "envs"
    for name, age in (("a", 50), ("b", 10), ("c", 40), ("d", 20), ("built", 100)):
        write(envs / name, {"template.json": "{}"})
        os.utime(envs / name / "template.json", (1e9 - age, 1e9 - age))
    write(envs / "half", {"lib/x.py": ""})  # no template.json: not one (yet); never counted or deleted
    gone = env_template.prune(envs, 7 * 86_400, keep=envs / "built", max_count=3, now=1e9)
    assert gone == ["a", "c"]  # oldest first
    assert sorted(p.name for p in envs.iterdir()) == ["b", "built", "d", "half"]
    assert env_template.prune(envs, 7 * 86_400, keep=envs / "built", max_count=1, now=1e9) == ["d", "b"]
    assert env_template.prune(envs, 7 * 86_400, keep=envs / "built", max_count=1, now=1e9) == []


@pytest.mark.parametrize("with_cp", [True, False])
def test_a_template_copy_keeps_links_modes_and_times_and_follows_no_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_cp: bool
) -> None:
    """copy_tree (GNU cp where it exists, shutil elsewhere) copies what copytree(symlinks=True) did."""
    if not with_cp:
        monkeypatch.setattr(repo_copy.shutil, "which", lambda _name: None)
    outside = tmp_path / "outside.txt"
    outside.write_text("host file\n")
    src = tmp_path / "template"
    write(src, {"bin/tool": "#!/bin/sh\n", "lib/site-packages/x.py": "X = 1\n"})
    (src / "bin" / "tool").chmod(0o755)
    (src / "bin" / "python").symlink_to("/usr/bin/python3")
    (src / "lib" / "escape").symlink_to(outside)
    os.utime(src / "lib/site-packages/x.py", (1e9, 1e9))
    dest = tmp_path / "env"
    dest.mkdir()
    repo_copy.copy_tree(src, dest)
    assert os.readlink(dest / "bin" / "python") == "/usr/bin/python3"
    assert (dest / "lib" / "escape").is_symlink() and os.readlink(dest / "lib" / "escape") == str(outside)
    assert (dest / "bin" / "tool").stat().st_mode & 0o777 == 0o755
    assert (dest / "lib/site-packages/x.py").stat().st_mtime == 1e9
    assert (dest / "lib/site-packages/x.py").read_text() == "X = 1\n"
    with pytest.raises(OSError):
        repo_copy.copy_tree(tmp_path / "gone", tmp_path / "env2")


@pytest.mark.slow
@pytest.mark.parametrize("chosen", ["uv", "pip"])
def test_the_bump_installs_the_indexs_files_over_a_dist_info_that_claims_the_target(
    tmp_path: Path, runner: Runner, chosen: str
) -> None:
    """The baseline's build backend runs with the environment writable: it can leave tinypkg 0.1.0's code
    under a dist-info that says 0.2.0. A bump to 0.2.0 (inside the task's from range, so the baseline's
    listing passes) took that as installed before (uv: nothing to do) and the tests ran on 0.1.0's code
    while run.json said 0.2.0. Now the bump's pins are installed afresh (pip: uninstalled first)."""
    if chosen == "uv" and installer.find_uv() is None:
        pytest.skip("uv is not installed (the `uv` extra)")
    wheels = wheelhouse(tmp_path, runner, ("0.1.0", "0.2.0"))
    repo = write(tmp_path / "repo", {"requirements.txt": "tinypkg>=0.1,<1\n"})
    config = settings(find_links=[str(wheels)], no_index=True, extra_test_requirements=[], installer=chosen)
    env = prepare_environment(repo, tmp_path / "env", config, runner, ["tinypkg==0.1.0"])
    assert all(r.ok for r in env.install_log), env.install_log[-1].output_tail
    site = next((tmp_path / "env" / "lib").glob("python3*/site-packages"))
    claimed = site / "tinypkg-0.2.0.dist-info"
    (site / "tinypkg-0.1.0.dist-info").rename(claimed)
    metadata = (claimed / "METADATA").read_text().replace("Version: 0.1.0", "Version: 0.2.0")
    (claimed / "METADATA").write_text(metadata)

    result = install_dependencies(repo, env, config, runner, ["tinypkg==0.2.0"])

    assert result.ok, result.output_tail
    assert env.install["installer"] == chosen
    if chosen == "uv":
        assert "--reinstall-package" in result.argv and "tinypkg" in result.argv
    else:  # after a plain install of the pins, which found them "already satisfied"
        plain = env.install_log[-2]
        assert (
            plain.ok and "--force-reinstall" not in plain.argv and plain.argv[-2:] == ["--", "tinypkg==0.2.0"]
        )
        assert {"--force-reinstall", "--no-deps"} <= set(result.argv)
    assert (site / "tinypkg" / "__init__.py").read_text() == 'VERSION = "0.2.0"\n'  # the wheel's
    # The installer compiled nothing (InstallPlan.host_compiles): the host wrote the pin's bytecode.
    assert "--compile-bytecode" not in result.argv and (chosen == "uv" or "--no-compile" in result.argv)
    assert Path(importlib.util.cache_from_source(str(site / "tinypkg" / "__init__.py"))).is_file()
