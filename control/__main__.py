"""`python -m control COMMAND ...`: Django's command line, as `manage.py` in a checkout; how an
installed Kube Kitchen starts its own child processes (`control.installation.manage_command`)."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line([sys.argv[0], *sys.argv[1:]])


if __name__ == "__main__":
    main()
