"""Alternative coders behind the same gates (`agentic-codemod run --coder NAME`).

    cline.py         one bounded run of the Cline CLI (npm `cline` 3.0.x) on a scratch directory
    cline_brain.py   ClineBrain: LlmBrain with Cline as the coder; its changes enter through the Workspace

The default coder stays the agno agent of llm/brain.py.
"""

CODERS = ("agno", "cline")
