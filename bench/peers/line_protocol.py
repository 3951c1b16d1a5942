"""The line protocol of the long-lived peer processes (bench/lib/python-helper.ts on the other end):
one JSON object per line each way, a `ready` line first, and any failure of a request answered as
{"error": "..."} so that the benchmark fails that run while the process carries on."""
import json
import sys


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def serve(ready, handle):
    """Send `ready`, then answer every request line with handle(request) until stdin closes."""
    send(ready)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            send(handle(json.loads(line)))
        except Exception as e:  # noqa: BLE001 — reported to the benchmark, which fails the run
            send({"error": f"{type(e).__name__}: {e}"})
