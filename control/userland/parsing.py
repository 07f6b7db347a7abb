"""Reading a shell line: `parse` turns text into commands (words, redirections, pipes) joined by
`;`, `&&` and `||`, as sh reads them.

Guarantees: a word is segments of single-quoted (literal), double-quoted (`$` expanded, `\\`
escapes `"`, `$`, `\\`), bare, `$(...)` (command) and `$((...))` (arithmetic) text, kept apart so
the shell expands each as sh does; redirections `>`, `>>`, `2>`, `2>>`, `2>&1`, `>&2`; what this
shell does not simulate (`&`, `<`, backquotes) and what sh cannot read are `ShellSyntaxError`
with sh's wording, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from control.userland import arithmetic, substitution
from control.userland.streams import ShellSyntaxError

Word = tuple[tuple[str, str], ...]  # (text, quoting) segments; "bare" | "single" | "double" | "command" ($(...))
#                                     | "arith" ($((...)))


@dataclass
class Redirect:
    fd: int  # 1 or 2
    append: bool = False
    target: Word | None = None  # the file (set when its word is read)
    onto_other: bool = False  # a duplication onto the other stream instead (2>&1, >&2)


@dataclass
class Command:
    words: list[Word]
    redirects: list[Redirect]
    pipe: list["Command"] = field(default_factory=list)  # the commands its output flows into, in order


# --- parsing ---------------------------------------------------------------------------------------

def parse(line: str) -> list[tuple[str, Command]]:
    """The commands of a line, each with the connector before it (";" for the first)."""
    commands: list[tuple[str, Command]] = []
    words: list[Word] = []
    redirects: list[Redirect] = []
    segments: list[tuple[str, str]] = []
    pipeline: list[Command] = []  # the commands before the `|`s of the one being read
    connector, pending_redirect, i = ";", None, 0

    def end_word() -> None:
        nonlocal segments, pending_redirect
        if not segments:
            return
        if pending_redirect is not None:
            pending_redirect.target = tuple(segments)
            redirects.append(pending_redirect)
            pending_redirect = None
        else:
            words.append(tuple(segments))
        segments = []

    def end_command(next_connector: str) -> None:
        nonlocal words, redirects, connector
        end_word()
        if pending_redirect is not None:
            raise ShellSyntaxError("syntax error: unexpected redirection")
        if pipeline and not (words or redirects):
            raise ShellSyntaxError("syntax error: unexpected end of file" if next_connector == ";"
                                   else f'syntax error: unexpected "{next_connector}"')
        if words or redirects:
            last = Command(words, redirects)
            head = Command(pipeline[0].words, pipeline[0].redirects, [*pipeline[1:], last]) if pipeline else last
            pipeline.clear()
            commands.append((connector, head))
        elif next_connector in ("&&", "||") or (connector in ("&&", "||") and commands):
            raise ShellSyntaxError(f"syntax error: unexpected \"{next_connector}\"")
        words, redirects, connector = [], [], next_connector

    while i < len(line):
        ch = line[i]
        if ch in " \t":
            end_word()
        elif ch == "#" and not segments:
            break
        elif ch == "'":
            close = line.find("'", i + 1)
            if close < 0:
                raise ShellSyntaxError("syntax error: unterminated quoted string")
            segments.append((line[i + 1:close], "single"))
            i = close
        elif ch == '"':
            parts, i = _double_quoted(line, i + 1)
            segments.extend(parts)
        elif line.startswith("$((", i) and (close := arithmetic.closing(line, i)) > 0:
            segments.append((line[i + 3:close - 1], "arith"))
            i = close
        elif line.startswith("$(", i):
            close = substitution.closing(line, i)
            segments.append((line[i + 2:close], "command"))
            i = close
        elif ch == "\\" and i + 1 < len(line):
            segments.append((line[i + 1], "single"))
            i += 1
        elif ch in ";\n" or line.startswith("&&", i) or line.startswith("||", i):
            op = ";" if ch in ";\n" else line[i:i + 2]
            end_command(op)
            i += len(op) - 1 if op != ";" else 0
        elif ch == "|":  # `||` was taken above: a pipe
            end_word()
            if pending_redirect is not None or not (words or redirects):
                raise ShellSyntaxError('syntax error: unexpected "|"')
            pipeline.append(Command(words, redirects))
            words, redirects = [], []
        elif ch in "&<`":
            raise ShellSyntaxError(f"syntax error: \"{ch}\" is not simulated in this shell")
        elif ch == ">":
            fd = 1
            if segments == [("2", "bare")] or segments == [("1", "bare")]:
                fd, segments = int(segments[0][0]), []
            end_word()
            append = line.startswith(">>", i)
            i += 1 if append else 0
            if line.startswith("&", i + 1) and i + 2 < len(line) and line[i + 2] in "12":
                if int(line[i + 2]) != fd:  # 1>&1 and 2>&2 change nothing
                    redirects.append(Redirect(fd, onto_other=True))
                i += 2
            else:
                if pending_redirect is not None:
                    raise ShellSyntaxError("syntax error: unexpected redirection")
                pending_redirect = Redirect(fd, append)
        else:
            if segments and segments[-1][1] == "bare":
                segments[-1] = (segments[-1][0] + ch, "bare")
            else:
                segments.append((ch, "bare"))
        i += 1
    end_command(";")
    return commands


def _double_quoted(line: str, i: int) -> tuple[list[tuple[str, str]], int]:
    """The segments of a double-quoted string from `line[i]` (its `$(...)` are their own), and
    the index of its closing quote."""
    out: list[str] = []
    parts: list[tuple[str, str]] = []
    while i < len(line):
        ch = line[i]
        if ch == '"':
            return [*parts, ("".join(out), "double")], i
        if line.startswith("$((", i) and (close := arithmetic.closing(line, i)) > 0:
            parts += [("".join(out), "double"), (line[i + 3:close - 1], "arith")]
            out, i = [], close + 1
            continue
        if line.startswith("$(", i):
            close = substitution.closing(line, i)
            parts += [("".join(out), "double"), (line[i + 2:close], "command")]
            out, i = [], close + 1
            continue
        if ch == "\\" and i + 1 < len(line) and line[i + 1] in '"\\$`':
            out.append("\\" + line[i + 1] if line[i + 1] == "$" else line[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    raise ShellSyntaxError("syntax error: unterminated quoted string")


def opens_compound(text: str) -> bool:
    """Whether `text` opens a compound command (while/for/if) that its next lines may close."""
    from control.userland import compound

    try:
        compound.structure(parse(text))
    except compound.Incomplete:
        return True
    except ShellSyntaxError:
        return False
    return False
