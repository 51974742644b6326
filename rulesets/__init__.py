"""Bundled rulesets (TOML files in this package), loadable by name.

>>> import rankcraft
>>> rankcraft.load_ruleset("elo").name
'elo'
"""
