"""The model side (ARCHITECTURE.md §4, §6, §9): the endpoint factory (factory.py), one bounded model call
(calls.py), what a failed call means (errors.py), the probe (probe.py), local backends (backend.py,
llamacpp.py), and the agents that fill the workflow's roles (brain.py, agent_runner.py, agent_tools.py,
agent_replies.py). Nothing here is imported on the offline path."""
