"""The lesson button that edits a control-plane component's static pod manifest, as an
administrator edits `/etc/kubernetes/manifests/<component>.yaml` on the control-plane node
(here `<data folder>/manifests/`; `control.staticpods` reads it as the kubelet would).

Guarantees:
- `static-pod` sets the first container's command word of one of kubeadm's four manifests
  (`form: {component, command}`) and leaves the rest of the file's content as it was; the file is
  replaced whole (written beside it, then renamed), so the kubelet never reads half a file.
- Only a user the hub allows to patch nodes may (the node's files are its administrator's): the
  hub's access review decides, as for every other button, and a refusal is the hub's 403 words.
- A component that is not one of the four, a command that is not one word, or a file that is
  missing or no longer a Pod is an `ActionError` naming it; nothing is written then.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from control import errors, safeyaml
from control.client.http import HubClient
from control.staticpods import manifests as files
from dashboard.access import PATCH_NODES, enforced, review
from dashboard.actions import ActionError

_COMMAND = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")


def data_dir() -> Path:
    from django.conf import settings

    return Path(settings.DATA_DIR)


def set_command(folder: Path, component: str, command: str) -> str:
    """Write `command` as the first word of `component`'s manifest; the line to show."""
    if component not in files.SPOKE_OF:
        raise ActionError(f"component: {component!r} is not one of {', '.join(files.SPOKE_OF)}")
    if not _COMMAND.match(command):
        raise ActionError(f"command: {command!r} is not one word")
    path = folder / f"{component}.yaml"
    try:
        found = files.parse(path, path.read_text())
    except OSError as exc:
        raise ActionError(f"{path.name}: {exc.strerror or exc}") from None
    if isinstance(found, files.Unreadable):
        raise ActionError(f"{path.name}: {found.message}")
    pod = safeyaml.load_documents(found.text)[0]
    container = pod["spec"]["containers"][0]
    words = [str(word) for word in container.get("command") or []]
    container["command"] = [command, *words[1:]]
    fresh = path.with_name(f".{path.name}.new")  # a hidden name: the kubelet skips it
    fresh.write_text(yaml.safe_dump(pod))
    fresh.replace(path)
    return f"{path.name}: command {command}"


async def static_pod(client: HubClient, form: dict[str, str]) -> str:
    component, command = (form.get("component") or "").strip(), (form.get("command") or "").strip()
    if enforced() and not await review(client, PATCH_NODES):
        raise errors.Forbidden(f'user may not edit the static pod manifests of the control plane: '
                               f'nodes is forbidden: cannot patch resource "nodes"')
    return set_command(files.folder_of(data_dir()), component, command)
