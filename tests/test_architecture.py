"""The layering of DESIGN.md, checked by import-linter: only storage writes the models, kinds stay
pure, the hub is layered (api over storage over kinds over models), the spokes know no other spoke
and reach the hub only over HTTP, the containers' userland knows neither the kubelet nor the client.
A failing contract names the offending import."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 7 kept, 0 broken" in result.stdout
