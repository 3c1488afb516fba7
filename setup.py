"""The one thing pyproject.toml cannot say: llm/ ships inside the wheel as `agentic_codemod.llm_files`.

llm/ holds models.yml, compose.yml (vLLM) and the mock endpoint (mock_server.py, a test double with
scripts for this project's fixtures). It stays a top-level directory of the repository, and an installed
tool finds it through agentic_codemod.llm.backend.llm_file(), so `python -m agentic_codemod.llm.backend up`
works from a wheel in any directory. Everything else is in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

PACKAGES = find_namespace_packages(include=["agentic_codemod", "agentic_codemod.*"])

setup(
    packages=[*PACKAGES, "agentic_codemod.llm_files"],
    package_dir={"agentic_codemod.llm_files": "llm"},
)
