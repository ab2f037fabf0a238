"""The process a `jq` stage runs in (started by `engine/jq.py`, never imported): it holds nothing but its input.

It is started with no environment but the import path and clears even that before `jq` is loaded, so jq's `env` and
`$ENV` are empty; it works in the filesystem's root, reads no module (jq's search path is empty here), writes
nothing but its answers (its stderr, where jq's `debug` and `stderr` go, is discarded) and may use MEMORY bytes at
most. A request is a header line `{"filter": F, "size": N}` and N bytes of UTF-8 input; the answer a header line
`{"size": N}` and N bytes, the JSON array of the filter's outputs, or `{"error": MESSAGE}`.
"""

import json
import os
import sys
from typing import Any, BinaryIO

MEMORY = 4 << 30  # bytes of address space the worker may use (a runaway `[range(1e10)]` fails, the server lives)


def _answer(out: BinaryIO, header: dict[str, Any], body: bytes = b"") -> None:
    out.write(json.dumps(header).encode() + b"\n" + body)
    out.flush()


def main() -> None:
    if sys.path and os.path.dirname(os.path.abspath(__file__)) == os.path.abspath(sys.path[0] or "."):
        del sys.path[0]  # this file's folder: the engine's modules are not to be imported by name
    os.environ.clear()  # unsetenv each: what libjq's `$ENV` reads is empty too
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    except (ImportError, ValueError, OSError):
        pass
    import jq

    programs: dict[str, Any] = {}
    read, out = sys.stdin.buffer, sys.stdout.buffer
    sys.setrecursionlimit(20_000)  # deep outputs are written, not refused
    while True:
        line = read.readline()
        if not line:
            return
        request = json.loads(line)
        text = read.read(request["size"]).decode("utf-8")
        try:
            program = programs.get(request["filter"])
            if program is None:
                program = programs[request["filter"]] = jq.compile(request["filter"])
                if len(programs) > 256:
                    programs.pop(next(iter(programs)))
            outputs = program.input_text(text).all()
            body = json.dumps(outputs, ensure_ascii=False).encode("utf-8")
        except (ValueError, RecursionError, MemoryError) as exc:
            _answer(out, {"error": str(exc) if not isinstance(exc, MemoryError) else "out of memory"})
            continue
        _answer(out, {"size": len(body)}, body)


if __name__ == "__main__":
    main()
