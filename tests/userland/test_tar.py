"""The simulated `tar`: real tar streams out of and into a container's filesystem, as kubectl cp
uses them, with busybox's messages for what goes wrong."""

from __future__ import annotations

import asyncio
import io
import tarfile

import pytest

from control.clock import FakeClock
from control.kubelet.filesystem import Filesystem, Mount
from control.userland.shell import Shell, Streams
from control.kubelet.storage import MemoryTree
from control.userland.tar import parse_args, reads_stdin
from control.kubelet.terminal import reads_stdin as session_reads_stdin

BINARY = bytes(range(256)) * 40 + b"\r\n\x00end"


def new_shell() -> Shell:
    fs = Filesystem.for_container(pod_name="box", namespace="default", pod_ip="10.244.0.9")
    fs.mount("/config", Mount(MemoryTree(files={"/key": b"v"}), read_only=True))
    return Shell(fs, clock=FakeClock(), hostname="box")


def run(shell: Shell, argv: list[str], stdin: bytes = b"") -> tuple[bytes, str, int]:
    out, err = bytearray(), bytearray()
    code = asyncio.run(shell.run_argv(argv, Streams(out.extend, err.extend, stdin)))
    return bytes(out), err.decode(), code


def archive(entries: dict[str, bytes | None], mode: int = 0o640) -> bytes:
    """A tar stream as kubectl's makeTar writes it (None: a directory)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.mode = mode
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_create_streams_a_real_tar_of_a_file_without_the_leading_slash():
    shell = new_shell()
    shell.fs.write("/tmp/data.bin", BINARY)
    out, err, code = run(shell, ["tar", "cf", "-", "/tmp/data.bin"])
    assert code == 0 and err == "tar: removing leading '/' from member names\n"
    with tarfile.open(fileobj=io.BytesIO(out)) as tar:
        assert tar.getnames() == ["tmp/data.bin"]
        assert tar.extractfile("tmp/data.bin").read() == BINARY


def test_create_walks_a_directory_with_its_modes():
    shell = new_shell()
    shell.fs.make_dir("/srv/site/css", parents=True)
    shell.fs.write("/srv/site/index.html", b"<h1>hi</h1>")
    shell.fs.write("/srv/site/css/a.css", b"body{}")
    shell.fs.chmod("/srv/site/index.html", 0o600)
    shell.cwd = "/srv"
    out, err, code = run(shell, ["tar", "-cvf", "-", "site"])
    assert code == 0 and err == "site/\nsite/css/\nsite/css/a.css\nsite/index.html\n"
    with tarfile.open(fileobj=io.BytesIO(out)) as tar:
        assert tar.getnames() == ["site", "site/css", "site/css/a.css", "site/index.html"]
        assert tar.getmember("site/index.html").mode == 0o600 and tar.getmember("site").isdir()


def test_extract_as_kubectl_cp_sends_it_writes_bytes_dirs_and_modes():
    shell = new_shell()
    stream = archive({"bar/sub/x.bin": BINARY, "bar/empty": None, "bar/y": b"y"})
    out, err, code = run(shell, ["tar", "-xmf", "-", "-C", "/tmp"], stream)
    assert (out, err, code) == (b"", "", 0)
    assert shell.fs.read("/tmp/bar/sub/x.bin") == BINARY and shell.fs.is_dir("/tmp/bar/empty")
    assert shell.fs.mode("/tmp/bar/y") == 0o640


def test_no_same_permissions_keeps_the_default_mode_and_v_lists_names():
    shell = new_shell()
    out, _, code = run(shell, ["tar", "--no-same-permissions", "--no-same-owner", "-xvmf", "-", "-C", "/tmp"],
                       archive({"f": b"1"}, mode=0o700))
    assert code == 0 and out == b"f\n" and shell.fs.mode("/tmp/f") == 0o644


def test_a_round_trip_through_create_and_extract_is_exact():
    shell = new_shell()
    shell.fs.make_dir("/data/d", parents=True)
    shell.fs.write("/data/d/blob", BINARY)
    stream, _, _ = run(shell, ["tar", "cf", "-", "/data"])
    shell.fs.make_dir("/copy")
    assert run(shell, ["tar", "xf", "-", "-C", "/copy"], stream)[2] == 0
    assert shell.fs.read("/copy/data/d/blob") == BINARY


def test_list_and_extract_to_stdout():
    shell = new_shell()
    stream = archive({"a": b"alpha", "d": None})
    assert run(shell, ["tar", "tf", "-"], stream)[0] == b"a\nd/\n"
    assert run(shell, ["tar", "xOf", "-"], stream)[0] == b"alpha"


def test_an_archive_file_in_the_container_and_gzip():
    shell = new_shell()
    shell.fs.write("/tmp/a", b"A")
    assert run(shell, ["tar", "czf", "/tmp/a.tgz", "/tmp/a"])[2] == 0
    shell.fs.make_dir("/out")
    assert run(shell, ["tar", "-xzf", "/tmp/a.tgz", "-C", "/out"])[2] == 0
    assert shell.fs.read("/out/tmp/a") == b"A"


@pytest.mark.parametrize("argv, stdin, message", [
    (["tar", "-xmf", "-", "-C", "/config"], archive({"k": b"x"}), "tar: can't open 'k': Read-only file system\n"),
    (["tar", "-xmf", "-", "-C", "/nope"], archive({"k": b"x"}),
     "tar: can't change directory to '/nope': No such file or directory\n"),
    (["tar", "xf", "-"], b"this is not a tar stream" * 40, "tar: invalid tar magic\n"),
    (["tar", "cf", "-"], b"", "tar: empty archive\n"),
    (["tar", "xqf", "-"], b"", "tar: invalid option -- 'q'\n"),
    (["tar", "--frobnicate"], b"", "tar: unrecognized option '--frobnicate'\n"),
])
def test_failures_are_busybox_messages_and_exit_1(argv, stdin, message):
    out, err, code = run(new_shell(), argv, stdin)
    assert code == 1 and err.startswith(message)


def test_a_missing_operand_is_reported_but_the_rest_is_archived():
    out, err, code = run(new_shell(), ["tar", "cf", "-", "/nope", "/etc/hostname"])
    assert code == 1
    assert err.splitlines() == ["tar: /nope: No such file or directory",
                                "tar: removing leading '/' from member names",
                                "tar: error exit delayed from previous errors"]
    with tarfile.open(fileobj=io.BytesIO(out)) as tar:
        assert tar.getnames() == ["etc/hostname"]


def test_an_empty_stream_is_an_empty_archive():
    assert run(new_shell(), ["tar", "xf", "-"], b"")[2] == 0


def test_options_and_who_reads_stdin():
    options = parse_args(["-xmf", "-", "-C", "/tmp"])
    assert (options.mode, options.archive, options.directory, "m" in options.letters) == ("x", "-", "/tmp", True)
    assert parse_args(["cf", "-", "/a", "b"]).operands == ["/a", "b"]
    assert reads_stdin(["-xmf", "-"]) and reads_stdin(["xf", "-"]) and reads_stdin(["-t"])
    assert not reads_stdin(["cf", "-", "/x"]) and not reads_stdin(["xf", "/tmp/a.tar"])
    assert session_reads_stdin(["tar", "-xmf", "-", "-C", "/tmp"]) and session_reads_stdin(["cat"])
    assert not session_reads_stdin(["tar", "cf", "-", "/tmp"]) and not session_reads_stdin(["cat", "/f"])


def test_a_hard_link_is_a_copy_and_a_symlink_is_skipped_with_a_word():
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("a")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"alpha"))
        for name, kind in (("b", tarfile.LNKTYPE), ("c", tarfile.SYMTYPE)):
            link = tarfile.TarInfo(name)
            link.type, link.linkname = kind, "a"
            tar.addfile(link)
    shell = new_shell()
    out, err, code = run(shell, ["tar", "xf", "-", "-C", "/tmp"], buffer.getvalue())
    assert code == 0 and err == "tar: c: only files and directories are simulated, skipped\n"
    assert shell.fs.read("/tmp/b") == b"alpha" and not shell.fs.exists("/tmp/c")
