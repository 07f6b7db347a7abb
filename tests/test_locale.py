"""The compiled Korean catalogue in the repository says what its source says.

`make run` needs no gettext because `locale/ko/LC_MESSAGES/django.mo` is kept compiled in the
repository; this fails when someone edits `django.po` and forgets to run msgfmt (or the reverse).
The catalogues are compared by their messages, not their bytes (msgfmt versions lay out the hash
table differently). `make test` installs gettext (`setup-test`).
"""

import gettext
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOGUES = sorted((ROOT / "locale").glob("*/LC_MESSAGES/*.po"))


def _messages(mo: Path) -> dict:
    with mo.open("rb") as f:
        return dict(gettext.GNUTranslations(f)._catalog)  # type: ignore[attr-defined]


def test_every_catalogue_is_compiled_in_the_repository():
    assert CATALOGUES, "no .po catalogue found under locale/"
    for po in CATALOGUES:
        assert po.with_suffix(".mo").is_file(), f"{po.with_suffix('.mo')} is missing: run msgfmt"


def test_the_compiled_catalogue_matches_its_source(tmp_path):
    msgfmt = shutil.which("msgfmt")
    assert msgfmt, "gettext's msgfmt is needed to check the catalogues (make setup-test installs it)"
    for po in CATALOGUES:
        fresh = tmp_path / f"{po.parent.parent.name}.mo"
        subprocess.run([msgfmt, "--check-format", "-o", str(fresh), str(po)], check=True)
        kept = _messages(po.with_suffix(".mo"))
        wanted = _messages(fresh)
        stale = sorted(str(k) for k in wanted.keys() ^ kept.keys() | {k for k in wanted.keys() & kept.keys()
                                                                       if wanted[k] != kept[k]})
        assert not stale, (f"{po.with_suffix('.mo')} does not match {po.name} ({len(stale)} messages differ, "
                           f"e.g. {stale[:3]}): run msgfmt -o {po.with_suffix('.mo').relative_to(ROOT)} "
                           f"{po.relative_to(ROOT)}")
