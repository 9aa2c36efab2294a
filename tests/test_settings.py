"""One settings table (kg.core.defaults.SETTINGS): every numeric default of the command line comes from it, with
its help text, and every number a help text gives as a default ("[500; …]") is one of its values."""

from __future__ import annotations

import re

import click

from kg.cli import cli
from kg.cli.common import SettingOption
from kg.core.defaults import SETTINGS


def _options() -> list[tuple[str, click.Option]]:
    found = []
    for name, command in sorted(cli.commands.items()):
        for sub, c in (command.commands.items() if isinstance(command, click.Group) else [(name, command)]):
            found += [(f"{sub} {p.opts[-1]}", p) for p in c.params if isinstance(p, click.Option)]
    return found


def _numeric(default: object) -> bool:
    return isinstance(default, (int, float)) and not isinstance(default, bool)


def test_every_numeric_option_default_comes_from_the_settings_table() -> None:
    numeric = [(name, o) for name, o in _options() if _numeric(o.default)]
    assert len(numeric) >= 10
    for name, option in numeric:
        assert isinstance(option, SettingOption), f"{name}: default {option.default!r} is not a setting of kg.core.defaults"
        assert option.default == option.setting.value and option.show_default
        assert (option.help or "").startswith(option.setting.help), name


def test_every_default_a_help_text_names_is_a_setting() -> None:
    values = {v.value for v in SETTINGS.values()} | {0}  # 0: "0 = all", "0 = no limit"
    for name, option in _options():
        for bracket in re.findall(r"\[([^\]]*)\]", option.help or ""):
            numbers = [int(n.replace(",", "")) for n in re.findall(r"(?<![\w.])\d[\d,]*(?![\w.])", bracket)]
            assert all(n in values for n in numbers), f"{name}: [{bracket}] names a default that is no setting"


def test_each_setting_says_what_it_is() -> None:
    assert all(s.help.endswith(".") and s.name == name for name, s in SETTINGS.items())
