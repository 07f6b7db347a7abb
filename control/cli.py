"""`kube-kitchen`: the installed command (`pip install .` / `pipx install .`), from any folder.

    kube-kitchen run [--data DIR] [runcluster's options]    the whole cluster and its dashboard
    kube-kitchen kubeconfig [--data DIR] [--server URL]     a kubeconfig for kubectl on stdout
    kube-kitchen component|hub|resolve|traffic ...          runcomponent, runhub, resolve, traffic
    kube-kitchen manage COMMAND ...                         any other management command (migrate, ...)

Guarantees: every subcommand is the management command of the same name behind it, with the same
options (`kube-kitchen run --help` lists runcluster's); `--data DIR` (or `--data=DIR`), accepted by
every subcommand, names the data folder, else `$KK_DATA_DIR`, else the user's data directory
(`control.installation.default_data_dir`), never the current folder; it is made owner-only before
anything reads it. Child processes (the hub, the spokes) are started as `python -m control`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

COMMANDS = {"run": "runcluster", "kubeconfig": "kubeconfig", "component": "runcomponent", "hub": "runhub",
            "resolve": "resolve", "traffic": "traffic"}
USAGE = """usage: kube-kitchen COMMAND [--data DIR] [options]

  run         the whole cluster: hub, dashboard and spokes (runcluster; --help for its options)
  kubeconfig  a kubeconfig for kubectl, on stdout
  component   one spoke alone (runcomponent)
  hub         the API server alone (runhub)
  resolve     ask the cluster DNS
  traffic     send requests to a Service from a node
  manage      any Django management command (e.g. kube-kitchen manage migrate)

--data DIR names the data folder (default: {default}).
"""


def take_data(argv: list[str]) -> tuple[str | None, list[str]]:
    """The value of `--data DIR` / `--data=DIR` in `argv`, and argv without it."""
    rest, data, index = [], None, 0
    while index < len(argv):
        word = argv[index]
        if word == "--":
            rest.extend(argv[index:])
            break
        if word == "--data":
            if index + 1 >= len(argv):
                raise SystemExit("kube-kitchen: --data needs a folder")
            data, index = argv[index + 1], index + 2
            continue
        if word.startswith("--data="):
            data = word.split("=", 1)[1]
        else:
            rest.append(word)
        index += 1
    return data, rest


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    from control.installation import default_data_dir

    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE.format(default=default_data_dir()), end="")
        raise SystemExit(0 if args else 2)
    name, rest = args[0], args[1:]
    if name == "manage":
        if not rest:
            raise SystemExit("kube-kitchen manage COMMAND: which management command?")
        command, rest = rest[0], rest[1:]
    elif name in COMMANDS:
        command = COMMANDS[name]
    else:
        raise SystemExit(f"kube-kitchen: unknown command {name!r}\n\n" + USAGE.format(default=default_data_dir()))
    data, rest = take_data(rest)
    # Before Django reads its settings: the data folder is named here, for this process and its children.
    os.environ["KK_DATA_DIR"] = str(Path(data).expanduser().resolve() if data else default_data_dir())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(["kube-kitchen", command, *rest])


if __name__ == "__main__":
    main()
