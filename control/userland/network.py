"""The cluster network as a simulated container's shell reaches it: `nslookup`/`dig` ask the
cluster DNS, `wget`/`curl` send one request to a Service (its name or ClusterIP) or a pod IP
through this node's kube-proxy, as traffic from a pod does, so the dashboard draws it.

Both go through the shell's injected `Network` (the kubelet's `NetworkHandle`, set by exec): this
module knows no hub and no HTTP client.

Guarantees: the programs print what busybox's print for the same outcome (nslookup's Server/Name/
Address lines or `** server can't find NAME: NXDOMAIN` with exit 1; wget's `bad address` or `can't
connect to remote host` with exit 1; curl's exit 6 and 7 with its messages), never an exception;
an answered request prints the body the answering pod's simulated server gives that URL's path,
(`Network.answer`), to stdout or to the file `-O FILE`/`-o FILE` names; `curl -i` prints the status line and headers
before it, `curl -I` only them (a HEAD request) and `wget -S` to stderr, with `x-kubekitchen-pod: <namespace>/<pod>` naming who answered.
A 404 page is printed by curl (exit 0) and refused by wget (`server returned error: HTTP/1.1 404
Not Found`, exit 1), as they do. Without a handle (a probe's shell) or when the hub cannot be
reached, a name does not resolve. Not simulated: HTTP methods and request headers and bodies.

A connection a NetworkPolicy dropped (the line, or the DNS answer, carries `dropped`) hangs as a
dropped packet does, on the shell's clock, then fails as the program does on a timeout: curl
after `--connect-timeout`/`-m`/`--max-time` (else the kernel's SYN retries, ~130 s) with exit
28 (`Failed to connect to HOST port PORT after N ms: Timeout was reached`, or `Connection timed
out after N milliseconds` when --max-time came first); wget after `-T`/`--timeout` with
`wget: download timed out`, else after the SYN retries with `can't connect to remote host (HOST):
Connection timed out`, exit 1; nslookup after its tries (`-timeout=` 5 s x `-retry=` 2) with
`;; connection timed out; no servers could be reached`, exit 1; dig the same after +time=5 x
+tries=3, exit 9; `nc -w N` after N s (`nc: timeout`), exit 1. `wget --spider` checks without
downloading (`remote file exists`); `nc [-z] [-w N] HOST PORT` connects (and says nothing with -z).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from control.userland.files import FsError
from control.userland.streams import Streams

if TYPE_CHECKING:  # the shell imports the program table: only its type here
    from control.userland.shell import Shell

Obj = dict[str, Any]
NO_RESOLV_CONF = "127.0.0.1"  # busybox's nameserver when /etc/resolv.conf names none
SYN_RETRIES_SECONDS = 130.0  # Linux's connect() gives up after tcp_syn_retries=6 (~127-131 s)
NO_SERVERS = ";; connection timed out; no servers could be reached\n"


def dropped(answer: Obj | None) -> bool:
    """Whether a NetworkPolicy dropped this connection (its packets are never answered)."""
    return isinstance(answer, dict) and bool(answer.get("dropped"))


def _seconds(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value >= 0 else None


class Network(Protocol):
    """The cluster network, injected by whoever runs the shell (the kubelet's `NetworkHandle`)."""

    async def resolve(self, name: str) -> Obj | None:
        """The DNS answer (`{"name", "type", "records"}`), or None: NXDOMAIN."""

    async def send(self, target: str, port: int | None) -> Obj:
        """kube-proxy's line for one request (`code` 200 answered, else `error`)."""

    def answer(self, line: Obj, path: str, now: float) -> "Response":
        """What the answering pod's server sends for `path`."""


def _nameserver(shell: Shell) -> str:
    try:
        text = shell.fs.read("/etc/resolv.conf").decode(errors="replace")
    except FsError:
        return NO_RESOLV_CONF
    return next((line.split()[1] for line in text.splitlines() if line.startswith("nameserver ")
                 and len(line.split()) > 1), NO_RESOLV_CONF)


async def _resolve(shell: Shell, name: str) -> Obj | None:
    return await shell.network.resolve(name) if shell.network is not None else None


async def nslookup(shell: Shell, args: list[str], io: Streams) -> int:
    names = [a for a in args if not a.startswith("-")]
    if not names:
        io.err(b"Usage: nslookup [-type=QUERY_TYPE] [-debug] HOST [NO_RESOLV_CONF]\n")
        return 1
    server = _nameserver(shell)
    answer = await _resolve(shell, names[0])
    if dropped(answer):
        options = dict(a[1:].split("=", 1) for a in args if a.startswith("-") and "=" in a)
        timeout, retry = _seconds(options.get("timeout", "5")), _seconds(options.get("retry", "2"))
        await shell.clock.sleep((timeout if timeout is not None else 5) * max(1, retry or 1))
        io.out(NO_SERVERS.encode())
        return 1
    io.out(f"Server:\t\t{server}\nAddress:\t{server}:53\n\n".encode())
    if answer is None:
        io.out(f"** server can't find {names[0]}: NXDOMAIN\n\n".encode())
        return 1
    lines = []
    if answer.get("type") == "CNAME":
        lines += [f"{answer['name']}\tcanonical name = {record}" for record in answer.get("records") or []]
    else:
        lines += [f"Name:\t{answer['name']}\nAddress: {record}" for record in answer.get("records") or []]
    io.out(("\n".join(lines) + "\n\n" if lines else "").encode())
    return 0


async def dig(shell: Shell, args: list[str], io: Streams) -> int:
    names = [a for a in args if not a.startswith(("+", "-", "@"))]
    short = "+short" in args
    name = names[0] if names else "."
    answer = await _resolve(shell, name)
    if dropped(answer):
        plus = dict(a[1:].split("=", 1) for a in args if a.startswith("+") and "=" in a)
        wait, tries = _seconds(plus.get("time", "5")), _seconds(plus.get("tries", "3"))
        await shell.clock.sleep((wait if wait is not None else 5) * max(1, tries or 1))
        io.out(NO_SERVERS.encode())
        return 9
    if short:
        io.out("".join(f"{r}\n" for r in (answer or {}).get("records") or []).encode())
        return 0
    status = "NOERROR" if answer is not None else "NXDOMAIN"
    records = [f"{answer['name']}.\t30\tIN\t{answer['type']}\t{r}" for r in answer.get("records") or []] \
        if answer is not None else []
    text = (f"; <<>> DiG 9.18 <<>> {name}\n;; ->>HEADER<<- opcode: QUERY, status: {status}\n\n"
            + (";; ANSWER SECTION:\n" + "\n".join(records) + "\n\n" if records else "")
            + f";; SERVER: {_nameserver(shell)}#53({_nameserver(shell)}) (UDP)\n")
    io.out(text.encode())
    return 0


def parse_url(text: str) -> tuple[str, int | None, str]:
    """(host, port or None, path) of `web`, `web:8000/x`, `http://10.96.0.5:80/`."""
    split = urlsplit(text if "://" in text else f"http://{text}")
    try:
        port = split.port
    except ValueError:
        port = -1
    return split.hostname or "", port, split.path or "/"


@dataclass(frozen=True)
class Response:
    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytes

    def head(self) -> bytes:
        """The status line and headers as the server sent them (what `curl -i` prints)."""
        lines = [b"HTTP/1.1 %d %s" % (self.status, self.reason)]
        lines += [name + b": " + value for name, value in self.headers]
        return b"\r\n".join(lines) + b"\r\n\r\n"


async def _fetch(shell: Shell, url: str) -> tuple[str, int | None, Obj]:
    host, port, _ = parse_url(url)
    if shell.network is None or not host or port == -1:
        return host, port, {"code": 503, "error": f"NXDOMAIN: {host}"}
    return host, port, await shell.network.send(host, port)


def _unresolved(line: Obj) -> bool:
    return str(line.get("error", "")).startswith("NXDOMAIN")


async def wget(shell: Shell, args: list[str], io: Streams) -> int:
    output, quiet, headers, spider, timeout, urls, rest = None, False, False, False, None, [], list(args)
    while rest:
        arg = rest.pop(0)
        if arg in ("-O", "--output-document") and rest:
            output = rest.pop(0)
        elif arg == "--server-response":
            headers = True
        elif arg == "--spider":
            spider = True
        elif arg == "--quiet":
            quiet = True
        elif arg.startswith("--timeout="):
            timeout = _seconds(arg.split("=", 1)[1])
        elif arg == "--timeout" and rest:
            timeout = _seconds(rest.pop(0))
        elif arg.startswith("-") and len(arg) > 1 and not arg.startswith("--"):
            quiet, headers = quiet or "q" in arg, headers or "S" in arg
            if "O" in arg:
                output = arg.split("O", 1)[1] or (rest.pop(0) if rest else "-")
            elif "T" in arg:  # -T SECONDS (or -T5): the network timeout
                timeout = _seconds(arg.split("T", 1)[1] or (rest.pop(0) if rest else ""))
            elif arg[-1] == "t" and rest:  # -t TRIES: no retry is simulated
                rest.pop(0)
        elif not arg.startswith("-"):
            urls.append(arg)
    if not urls:
        io.err(b"BusyBox v1.36.1 multi-call binary.\n\nUsage: wget [-cqS] [--spider] [-O FILE] [-T SEC] URL...\n")
        return 1
    host, port, line = await _fetch(shell, urls[0])
    if not quiet:
        io.err(f"Connecting to {host}{f':{port}' if port else ''}\n".encode())
    if dropped(line):
        if timeout is not None and timeout < SYN_RETRIES_SECONDS:
            await shell.clock.sleep(timeout)
            io.err(b"wget: download timed out\n")
        else:
            await shell.clock.sleep(SYN_RETRIES_SECONDS)
            io.err(f"wget: can't connect to remote host ({host}): Connection timed out\n".encode())
        return 1
    if line.get("code") != 200:
        if _unresolved(line):
            io.err(f"wget: bad address '{host}{f':{port}' if port else ''}'\n".encode())
        else:
            io.err(f"wget: can't connect to remote host ({host}): Connection refused\n".encode())
        return 1
    answer = shell.network.answer(line, parse_url(urls[0])[2], shell.clock.now())
    if headers:
        io.err(b"".join(b"  " + row + b"\n" for row in answer.head().split(b"\r\n") if row))
    if answer.status != 200:
        io.err(b"wget: server returned error: " + answer.head().split(b"\r\n", 1)[0] + b"\n")
        return 1
    if spider:
        if not quiet:
            io.err(b"remote file exists\n")
        return 0
    body = answer.body
    target = output or "index.html"
    failed = _deliver(shell, io, target, body)
    if failed is not None:
        io.err(f"wget: can't open '{target}': {failed}\n".encode())
        return 1
    if not quiet and target != "-":
        io.err(f"saving to '{target}'\n'{target}' saved\n".encode())
    return 0


async def curl(shell: Shell, args: list[str], io: Streams) -> int:
    output, silent, show_errors, include, head_only, urls, rest = None, False, False, False, False, [], list(args)
    max_time: float | None = None
    connect_timeout: float | None = None
    while rest:
        arg = rest.pop(0)
        if arg in ("-o", "--output") and rest:
            output = rest.pop(0)
        elif arg == "--include":
            include = True
        elif arg == "--head":
            head_only = True
        elif arg in ("-m", "--max-time") and rest:
            max_time = _seconds(rest.pop(0))
        elif arg == "--connect-timeout" and rest:
            connect_timeout = _seconds(rest.pop(0))
        elif arg.startswith(("--max-time=", "--connect-timeout=")):
            name, _, value = arg.partition("=")
            if name == "--max-time":
                max_time = _seconds(value)
            else:
                connect_timeout = _seconds(value)
        elif arg in ("-H", "-X", "-d", "-A") and rest:
            rest.pop(0)  # no header or body is simulated
        elif arg.startswith("-") and not arg.startswith("--"):
            silent, show_errors, include = silent or "s" in arg, show_errors or "S" in arg, include or "i" in arg
            head_only = head_only or "I" in arg
        elif not arg.startswith("-"):
            urls.append(arg)
    if not urls:
        io.err(b"curl: try 'curl --help' or 'curl --manual' for more information\n")
        return 2
    host, port, line = await _fetch(shell, urls[0])
    if dropped(line):
        message = await _curl_hangs(shell, host, port, connect_timeout, max_time)
        if not silent or show_errors:
            io.err(f"curl: (28) {message}\n".encode())
        return 28
    if line.get("code") != 200:
        code = 6 if _unresolved(line) else 7
        if not silent or show_errors:
            message = (f"Could not resolve host: {host}" if code == 6 else
                       f"Failed to connect to {host} port {port or 80} after 0 ms: Couldn't connect to server")
            io.err(f"curl: ({code}) {message}\n".encode())
        return code
    answer = shell.network.answer(line, parse_url(urls[0])[2], shell.clock.now())
    body = answer.head() if head_only else (answer.head() if include else b"") + answer.body
    failed = _deliver(shell, io, output or "-", body)
    if failed is not None:
        io.err(f"curl: (23) Failure writing output to destination: {failed}\n".encode())
        return 23
    return 0


async def _curl_hangs(shell: Shell, host: str, port: int | None, connect_timeout: float | None,
                      max_time: float | None) -> str:
    """Wait as curl waits for a connection never answered; its message when it gives up."""
    limits = [t for t in (connect_timeout, max_time) if t]  # 0 means no limit, as in curl
    wait = min([*limits, SYN_RETRIES_SECONDS])
    started = shell.clock.monotonic()
    await shell.clock.sleep(wait)
    ms = int(round((shell.clock.monotonic() - started) * 1000))
    if max_time and wait == max_time and (not connect_timeout or max_time < connect_timeout):
        return f"Connection timed out after {ms} milliseconds"
    return f"Failed to connect to {host} port {port or 80} after {ms} ms: Timeout was reached"


def _deliver(shell: Shell, io: Streams, target: str, body: bytes) -> FsError | None:
    """`body` to standard output ("-") or into the file `target`; the file system's refusal, if any."""
    if target == "-":
        io.out(body)
        return None
    try:
        shell.fs.write(shell.fs.resolve(shell.cwd, target), body)
    except FsError as exc:
        return exc
    return None


async def nc(shell: Shell, args: list[str], io: Streams) -> int:
    """busybox nc as a client: `nc [-z] [-v] [-w SEC] HOST PORT` connects and reports; no bytes are
    exchanged (a connection that opens closes at once)."""
    zero, verbose, wait, operands, rest = False, False, None, [], list(args)
    while rest:
        arg = rest.pop(0)
        if arg.startswith("-") and len(arg) > 1:
            zero, verbose = zero or "z" in arg, verbose or "v" in arg
            if "w" in arg:
                wait = _seconds(arg.split("w", 1)[1] or (rest.pop(0) if rest else ""))
        else:
            operands.append(arg)
    if len(operands) != 2 or not operands[1].isdigit() or not 0 < int(operands[1]) < 65536:
        io.err(b"BusyBox v1.36.1 multi-call binary.\n\nUsage: nc [OPTIONS] HOST PORT  - connect\n")
        return 1
    host, port = operands[0], int(operands[1])
    line = await shell.network.send(host, port) if shell.network is not None else {"error": f"NXDOMAIN: {host}"}
    if dropped(line):
        await shell.clock.sleep(wait if wait else SYN_RETRIES_SECONDS)
        io.err(b"nc: timeout\n" if wait else
               f"nc: can't connect to remote host ({host}): Connection timed out\n".encode())
        return 1
    if _unresolved(line):
        io.err(f"nc: bad address '{host}'\n".encode())
        return 1
    if line.get("code") != 200:
        io.err(f"nc: can't connect to remote host ({host}): Connection refused\n".encode())
        return 1
    if verbose:
        io.err(f"{host} ({str(line.get('endpoint') or host).rpartition(':')[0] or host}:{port}) open\n".encode())
    return 0
