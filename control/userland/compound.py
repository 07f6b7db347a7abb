"""The shell's compound commands, as lessons write them on one line (or across the lines of a
script): `while LIST; do LIST; done`, `until ...`, `for NAME in WORDS; do LIST; done` and
`if LIST; then LIST; [elif LIST; then LIST;] [else LIST;] fi`.

Guarantees: `structure` turns the flat command list `parsing.parse` reads into a tree; a reserved
word counts only as the first, unquoted word of a command (`echo done` prints "done"). A compound
left open raises `Incomplete` (a script's next lines may close it), a reserved word out of place
a `ShellSyntaxError` with the shell's wording. A compound command whose closing word (`done`,
`fi`) is piped (`done | grep x`) is a `Piped` node: the shell's pipeline with the compound first.
`run` runs a tree: a loop's status is its last
body's (0 when the body never ran), `if`'s the branch's (0 when none ran). Every loop turn yields
to the event loop, so `while true; do echo x; done` can be interrupted (Ctrl-C, the stream closed)
and never starves the kubelet; `sleep` in the body waits on the shell's clock as anywhere.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from control.userland.parsing import Command
    from control.userland.shell import Shell
    from control.userland.streams import Streams

RESERVED = ("while", "until", "for", "if", "then", "elif", "else", "fi", "do", "done")


class Incomplete(Exception):
    """The line opens a compound command it does not close."""

    def __init__(self, expecting: str):
        super().__init__(f'syntax error: unexpected end of file (expecting "{expecting}")')
        self.expecting = expecting


@dataclass(frozen=True)
class Word:
    """A reserved word, with the words that followed it in its command (`for`'s header, or the
    first command of the list it opens), and the commands a closing word pipes into (`done | grep`)."""
    word: str
    rest: "Command | None"
    pipe: tuple = ()


@dataclass
class Piped:
    """A compound command piped into commands: `while ...; done | grep x`."""
    node: "Node"
    pipe: list


@dataclass
class Loop:
    until: bool
    condition: list
    body: list


@dataclass
class ForLoop:
    name: str
    items: list  # words, expanded when the loop starts
    body: list


@dataclass
class If:
    branches: list = field(default_factory=list)  # (condition, body)
    otherwise: list | None = None


Node = Union["Command", Loop, ForLoop, If, "Piped"]


def _tokens(commands: list[tuple[str, "Command"]]) -> list[tuple[str, "Command | Word"]]:
    from control.userland.parsing import Command

    out: list[tuple[str, Command | Word]] = []
    for connector, command in commands:
        first = command.words[0] if command.words else ()
        if len(first) == 1 and first[0][1] == "bare" and first[0][0] in RESERVED:
            keyword = first[0][0]
            piped = command.pipe and len(command.words) == 1  # `done | grep x`: a compound command piped
            if piped and keyword not in ("done", "fi"):
                raise _unexpected("|")
            rest = Command(command.words[1:], command.redirects, command.pipe) if len(command.words) > 1 else None
            if keyword == "for":
                out.append((connector, Word(keyword, rest)))
                continue
            out.append((connector, Word(keyword, None, tuple(command.pipe) if piped else ())))
            if rest is not None:
                out.append((";", rest))
        else:
            out.append((connector, command))
    return out


def structure(commands: list[tuple[str, "Command"]]) -> list[tuple[str, Node]]:
    """The tree of a parsed line; `Incomplete` or `ShellSyntaxError` when it is not one."""
    tokens = _tokens(commands)
    nodes, pos = _block(tokens, 0, ())
    return nodes


def _piped(node: Node, closing: Word) -> Node:
    """The compound command, piped into what its closing word pipes into (if anything)."""
    return Piped(node, list(closing.pipe)) if closing.pipe else node


def _unexpected(word: str) -> Exception:
    from control.userland.streams import ShellSyntaxError
    return ShellSyntaxError(f'syntax error: unexpected "{word}"')


def _expect(tokens: list, pos: int, word: str, closing: str) -> int:
    if pos >= len(tokens):
        raise Incomplete(closing)
    token = tokens[pos][1]
    if not isinstance(token, Word) or token.word != word:
        raise _unexpected(token.word if isinstance(token, Word) else "command")
    return pos + 1


def _block(tokens: list, pos: int, stops: tuple[str, ...]) -> tuple[list[tuple[str, Node]], int]:
    nodes: list[tuple[str, Node]] = []
    while pos < len(tokens):
        connector, token = tokens[pos]
        if not isinstance(token, Word):
            nodes.append((connector, token))
            pos += 1
            continue
        if token.word in stops:
            return nodes, pos
        if token.word in ("while", "until"):
            condition, pos = _block(tokens, pos + 1, ("do",))
            pos = _expect(tokens, pos, "do", "do")
            body, pos = _block(tokens, pos, ("done",))
            pos = _expect(tokens, pos, "done", "done")
            nodes.append((connector, _piped(Loop(token.word == "until", condition, body), tokens[pos - 1][1])))
        elif token.word == "for":
            words = token.rest.words if token.rest is not None else []
            if not words or len(words[0]) != 1 or (len(words) > 1 and words[1] != (("in", "bare"),)):
                raise _unexpected("for")
            pos = _expect(tokens, pos + 1, "do", "do")
            body, pos = _block(tokens, pos, ("done",))
            pos = _expect(tokens, pos, "done", "done")
            nodes.append((connector, _piped(ForLoop(words[0][0][0], words[2:], body), tokens[pos - 1][1])))
        elif token.word == "if":
            branch = If()
            pos += 1
            while True:
                condition, pos = _block(tokens, pos, ("then",))
                pos = _expect(tokens, pos, "then", "then")
                body, pos = _block(tokens, pos, ("elif", "else", "fi"))
                branch.branches.append((condition, body))
                if pos >= len(tokens):
                    raise Incomplete("fi")
                word = tokens[pos][1].word
                pos += 1
                if word == "elif":
                    continue
                if word == "else":
                    branch.otherwise, pos = _block(tokens, pos, ("fi",))
                    pos = _expect(tokens, pos, "fi", "fi")
                break
            nodes.append((connector, _piped(branch, tokens[pos - 1][1])))
        else:
            raise _unexpected(token.word)
    if stops:
        raise Incomplete(stops[-1])
    return nodes, pos


async def run_list(shell: "Shell", nodes: list[tuple[str, Node]], io: "Streams") -> int:
    """Run a list as the shell runs a line: `&&`/`||` look at the status so far."""
    for connector, node in nodes:
        if (connector == "&&" and shell.status != 0) or (connector == "||" and shell.status == 0):
            continue
        shell.status = await run(shell, node, io)
    return shell.status


async def run(shell: "Shell", node: Node, io: "Streams") -> int:
    if isinstance(node, Piped):
        return await shell.pipeline(lambda streams: run(shell, node.node, streams), node.pipe, io)
    if isinstance(node, Loop):
        status = 0
        while True:
            await asyncio.sleep(0)  # a turn of the loop: let the stream, Ctrl-C and the kubelet in
            if (await run_list(shell, node.condition, io) == 0) == node.until:
                return status
            status = await run_list(shell, node.body, io)
    if isinstance(node, ForLoop):
        status = 0
        from control.userland.substitution import substituted

        items = [shell.expand(await substituted(shell, word, io)) for word in node.items]
        for item in [part for text in items for part in text.split()]:
            await asyncio.sleep(0)
            shell.vars[node.name] = item
            status = await run_list(shell, node.body, io)
        return status
    if isinstance(node, If):
        for condition, body in node.branches:
            if await run_list(shell, condition, io) == 0:
                return await run_list(shell, body, io)
        return await run_list(shell, node.otherwise, io) if node.otherwise is not None else 0
    return await shell.run_command(node, io)
