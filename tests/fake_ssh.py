"""A hostile stand-in for ssh, given as ARCHIVIST_SSH_COMMAND: it answers the listing script and
the fetch script with what the JSON file named by FAKE_SSH_SPEC says, byte for byte.

The spec's keys, each optional: ``listing`` (lines, sent as their file-system bytes),
``list_sleep`` (seconds of silence before the listing), ``stderr`` (that many bytes written to
stderr before anything else), ``members`` (the tar's members: ``name``, ``data`` or ``fill``
(that many bytes), ``type`` (file, symlink, hardlink, dir), ``pax`` (extended headers)),
``cut`` (the stream cut after that many bytes), ``sleep`` (seconds of silence after the
stream), ``exit`` (the fetch's exit status), ``argv`` (a file each call's arguments are
appended to, one JSON line each)."""

from __future__ import annotations

import io
import json
import os
import sys
import tarfile
import time
from pathlib import Path


def tar(members: list[dict]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as out:
        for member in members:
            info = tarfile.TarInfo(member["name"])
            data = member["data"].encode() if "data" in member else b"x" * member.get("fill", 0)
            kind = member.get("type", "file")
            info.mtime = member.get("mtime", 100)
            if member.get("pax"):
                info.pax_headers = member["pax"]
            if kind == "file":
                info.size = len(data)
                out.addfile(info, io.BytesIO(data))
                continue
            info.type = {"symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE, "dir": tarfile.DIRTYPE}[kind]
            info.linkname = member.get("target", "/etc/passwd")
            out.addfile(info)
    return buffer.getvalue()


def main() -> int:
    spec = json.loads(Path(os.environ["FAKE_SSH_SPEC"]).read_text(encoding="utf-8"))
    script = sys.stdin.buffer.read()
    fetching = b"tar -cf" in script
    if spec.get("argv"):
        with open(spec["argv"], "a", encoding="utf-8") as log:
            log.write(json.dumps({"argv": sys.argv[1:], "fetch": fetching, "script": script.decode()}) + "\n")
    out = sys.stdout.buffer
    if spec.get("stderr"):
        sys.stderr.buffer.write(b"e" * spec["stderr"])
        sys.stderr.flush()
    if not fetching:
        time.sleep(spec.get("list_sleep", 0))
        out.write(b"".join(os.fsencode(line) + b"\n" for line in spec.get("listing", [])))
        return 0
    stream = tar(spec.get("members", []))
    out.write(stream[: spec["cut"]] if "cut" in spec else stream)
    out.flush()
    time.sleep(spec.get("sleep", 0))
    return int(spec.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
