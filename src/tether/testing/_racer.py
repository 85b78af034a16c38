"""One racer of the served consume-once check: ``python -m tether.testing._racer CONFIG_JSON``.

It prints ``ready``, waits for the gate file the parent creates once every racer is ready, sends
one HTTP request (``method``, ``url``, ``json``, ``headers``) and prints one JSON line: the status,
the JSON body and whether the server says the request was a replay (``Idempotent-Replayed``).
Not a public API.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from ._http import request


def main(config: dict[str, Any]) -> int:
    print("ready", flush=True)
    while not os.path.exists(config["gate"]):
        time.sleep(0.001)
    status, body, headers = request(config["url"], config["json"], config.get("headers"), timeout=config.get("timeout", 60))
    replayed = headers.get("idempotent-replayed") == "true"
    print(json.dumps({"status": status, "body": body, "replayed": replayed}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
