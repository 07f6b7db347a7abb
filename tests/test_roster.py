"""control.roster, the contract between the workshop's provisioning and the dashboard: codes log in
(the instructor's once, also when several processes race for it), names are claimed once, files
are whole and owner-only, and the dashboard reaches the roster only through the module."""

from __future__ import annotations

import ast
import stat
import subprocess
import sys
from pathlib import Path

from control import roster
from control.auth import tokenfile

ROOT = Path(__file__).resolve().parent.parent


def test_codes_log_in_and_the_instructors_works_once(tmp_path):
    alice = tokenfile.token_of(tmp_path, "alice")
    code = roster.join_code(tmp_path, "alice")
    assert roster.join_code(tmp_path, "alice") == code
    assert len(code) == roster.CODE_LENGTH and set(code) <= set(roster.ALPHABET)
    assert roster.redeem(tmp_path, f" {code[:3].lower()}-{code[3:]} ") == ("alice", alice)
    assert roster.redeem(tmp_path, code) == ("alice", alice)  # a join code is kept
    once = roster.instructor_code(tmp_path)
    assert roster.redeem(tmp_path, once) == (tokenfile.ADMIN, tokenfile.admin_token(tmp_path))
    assert roster.redeem(tmp_path, once) is None
    assert roster.redeem(tmp_path, "") is None and roster.redeem(tmp_path, "ZZZZZZ") is None
    assert roster.attendee_codes(tmp_path) == {"alice": code}


def test_a_name_is_claimed_once_until_released_and_the_claim_is_kept_on_disk(tmp_path):
    assert roster.claim(tmp_path, "alice") is True
    assert roster.claim(tmp_path, "alice") is False
    assert roster.claimed(tmp_path) == {"alice"}
    assert (tmp_path / "workshop" / "claims" / "alice").exists()  # another hub process sees it too
    assert roster.claim(tmp_path, "../alice") is False and roster.release(tmp_path, "../x") is False
    assert roster.release(tmp_path, "alice") is True and roster.release(tmp_path, "alice") is False
    assert roster.claim(tmp_path, "alice") is True


def test_only_the_uses_asked_for_are_redeemed_and_peek_uses_nothing(tmp_path):
    tokenfile.token_of(tmp_path, "alice")
    once = roster.instructor_code(tmp_path)
    assert roster.peek(tmp_path, once.lower()).use == roster.ONCE
    assert roster.redeem(tmp_path, once, (roster.JOIN,)) is None
    assert roster.redeem(tmp_path, once, (roster.ONCE,))[0] == tokenfile.ADMIN
    assert roster.peek(tmp_path, once) is None


def test_the_layout_is_the_documented_one_and_owner_only(tmp_path):
    code = roster.join_code(tmp_path, "alice")
    once = roster.instructor_code(tmp_path)
    roster.claim(tmp_path, "alice")
    written = roster.write_kubeconfig(tmp_path, "alice", "https://127.0.0.1:8001", "t0ken", b"")
    folder = tmp_path / "workshop"
    assert (folder / "codes.csv").read_text() == f"{code},alice,join\n{once},{tokenfile.ADMIN},once\n"
    assert written == folder / "alice.kubeconfig" and roster.kubeconfig_of(tmp_path, "alice") == written.read_text()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for path in (folder / "codes.csv", folder / "codes.lock", folder / "claims" / "alice", written):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert not list(folder.glob("*.tmp")), "the temporary file was renamed over codes.csv"


def test_an_unknown_code_in_a_folder_without_a_workshop_makes_nothing(tmp_path):
    assert roster.redeem(tmp_path, "ABCDEF") is None and roster.peek(tmp_path, "ABCDEF") is None
    assert roster.attendee_codes(tmp_path) == {} and roster.claimed(tmp_path) == set()
    assert not (tmp_path / "workshop").exists()


RACE = """
import sys
from pathlib import Path
from control import roster
data, code, start = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
while not start.exists():
    pass
made = [roster.instructor_code(data, "maker") for _ in range(5)]
print("redeemed" if roster.redeem(data, code) else "refused", *made)
"""


def test_processes_sharing_the_folder_use_a_one_time_code_once_and_lose_no_code(tmp_path):
    """Six processes at once: each tries the same one-time code and makes five codes of its own.
    Without the file-system lock two of them could both read the code before either wrote, or one
    could write its list over another's."""
    tokenfile.token_of(tmp_path, "maker")
    once = roster.instructor_code(tmp_path)
    start = tmp_path / "start"
    racers = [subprocess.Popen([sys.executable, "-c", RACE, str(tmp_path), once, str(start)], cwd=ROOT,
                               stdout=subprocess.PIPE, text=True) for _ in range(6)]
    start.touch()
    answers = [racer.communicate(timeout=60)[0].split() for racer in racers]
    assert all(racer.returncode == 0 for racer in racers)
    assert sorted(answer[0] for answer in answers) == ["redeemed"] + ["refused"] * 5
    made = {code for answer in answers for code in answer[1:]}
    assert len(made) == 30
    assert {c.code for c in roster._read(tmp_path)} == made, "every code made is kept, the used one is gone"


ROSTER_FILES = ("codes.csv", "tokens.csv", "claims/", "codes.lock", "workshop/")


def test_the_dashboard_reaches_the_roster_only_through_control_roster():
    """No dashboard module names a file of the roster or the token file, or imports the workshop's
    provisioning: the format has one owner."""
    for path in sorted((ROOT / "dashboard").rglob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                assert not any(name in node.value for name in ROSTER_FILES), f"{path}: {node.value!r}"
            if isinstance(node, ast.ImportFrom) and node.module == "control":
                assert "workshop" not in {alias.name for alias in node.names}, path
            if isinstance(node, ast.ImportFrom):
                assert node.module != "control.workshop", path
