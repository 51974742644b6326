"""rankcraft's first-party plugins, one module per plugin.

Each is registered through the ``rankcraft`` entry-point group, exactly as a third-party
plugin would be (see pyproject.toml and docs/plugins.md).
"""
