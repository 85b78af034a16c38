"""``tether serve MODULE:ATTR``: serve a registry of agents over HTTP (see :mod:`tether.serve`).

``MODULE:ATTR`` names a dict of agent names to zero-argument factories (importable from the
current directory). The server binds ``127.0.0.1`` unless ``--host`` says otherwise, and a
non-loopback ``--host`` is refused without ``--token`` (every request must then carry it as a
bearer token). ``--allowed-host`` lists the names a proxy forwards (the Host header is checked);
``--cors ORIGIN`` lets pages of that origin call the API. Needs ``pip install 'tether[serve]'``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..errors import ConfigurationError
from .stores import StoreSpec

TOKEN_VAR = "TETHER_SERVE_TOKEN"


def add_parser(command: Any) -> None:
    """Add the ``serve`` subcommand through the app's ``command(name, help)`` helper."""
    sub = command("serve", "serve agents over HTTP: durable runs, resumable event streams (SSE), interrupts answered over HTTP")
    sub.add_argument("registry", metavar="MODULE:ATTR", help="a dict of agent names to zero-argument factories (Agent, Graph or Swarm)")
    sub.add_argument("--host", default="127.0.0.1", help="the address to bind (default 127.0.0.1; another one needs --token)")
    sub.add_argument("--port", type=_port, default=8000, help="the port (default 8000)")
    sub.add_argument("--token", help=f"require Authorization: Bearer TOKEN on every request (default: ${TOKEN_VAR})")
    sub.add_argument("--cors", action="append", default=[], metavar="ORIGIN", help="allow browser pages of ORIGIN (repeatable)")
    sub.add_argument(
        "--allowed-host", action="append", default=[], metavar="NAME", help="a Host name the server answers to (behind a proxy); repeatable"
    )
    sub.add_argument("--scan-interval", type=float, default=5.0, metavar="S", help="seconds between scans for stalled runs (default 5)")
    sub.add_argument("--max-body", type=int, default=1 << 20, metavar="BYTES", help="the largest request body (default 1 MiB)")
    sub.add_argument(
        "--grace",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="on SIGTERM, how long the runs executing here may take to finish their step (a tool call) before they are handed over "
        "(default 30)",
    )
    sub.add_argument("--log-format", choices=("text", "json"), default="text", help="log lines as logfmt (text, default) or JSON lines")
    sub.add_argument(
        "--header-timeout", type=float, default=10.0, metavar="S", help="seconds a client has to send a request's headers (default 10)"
    )
    sub.add_argument(
        "--body-timeout", type=float, default=30.0, metavar="S", help="seconds a request body may pause between two pieces (default 30)"
    )


def cmd_serve(args: argparse.Namespace, path: StoreSpec) -> int:
    """Check the flags, load the registry, open the store and serve until Ctrl-C."""
    try:
        import uvicorn

        from ..serve import create_app, load_registry
        from ..serve.drain import install
        from ..serve.limits import protocol_with_header_timeout
        from ..serve.logs import configure
        from ..serve.security import is_loopback
    except ModuleNotFoundError as exc:  # the serve extra is not installed
        missing = (exc.name or "").split(".")[0] or "a module"
        raise ConfigurationError(f"needs {missing}, which is not installed: pip install 'tether[serve]'") from None
    token = args.token or os.environ.get(TOKEN_VAR) or None
    if not is_loopback(args.host) and token is None:
        raise ConfigurationError(
            f"--host {args.host!r} is not a loopback address: pass --token TOKEN (or set ${TOKEN_VAR}) so every request must "
            "carry it, or keep the default 127.0.0.1"
        )
    if not args.scan_interval > 0:
        raise ConfigurationError(f"--scan-interval {args.scan_interval}: must be a positive number of seconds")
    if args.max_body < 1:
        raise ConfigurationError(f"--max-body {args.max_body}: must be a positive number of bytes")
    for flag in ("grace", "header_timeout", "body_timeout"):
        if not getattr(args, flag) >= 0:
            raise ConfigurationError(f"--{flag.replace('_', '-')} {getattr(args, flag)}: must be a number of seconds (0 or more)")
    sys.path.insert(0, os.getcwd())
    registry = load_registry(args.registry)
    allowed = list(args.allowed_host) or default_hosts(args.host)
    store = path.open(create=True)
    app = create_app(
        registry,
        store,
        token=token,
        cors=args.cors or None,
        max_body=args.max_body,
        allowed_hosts=allowed,
        scan_interval=args.scan_interval,
        grace=args.grace,
        body_timeout=args.body_timeout,
    )
    configure(json_lines=args.log_format == "json")
    print(
        f"serving {', '.join(sorted(registry))} on http://{args.host}:{args.port} (store {path}; Ctrl-C stops)", file=sys.stderr, flush=True
    )
    # On SIGTERM the app drains (tether.serve.drain): its runs finish their step within --grace
    # seconds and are handed over, and the streams close once their run is; uvicorn waits for them.
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,  # tether.serve logs every request itself (tether.serve.logs)
        timeout_graceful_shutdown=int(args.grace) + 5,
        http=protocol_with_header_timeout(args.header_timeout),
    )
    server = uvicorn.Server(config)
    install(server, app.state.runs)
    server.run()
    return 0


def default_hosts(host: str) -> list[str]:
    """The Host names a server bound to ``host`` answers to without ``--allowed-host``: loopback
    names on loopback, any name on a wildcard address (``0.0.0.0``, ``::``: the token is required
    there and guards every request), else the bound address itself."""
    from ..serve.security import LOOPBACK_NAMES, is_loopback

    if is_loopback(host):
        return [*LOOPBACK_NAMES]
    if host in ("0.0.0.0", "::", ""):
        return ["*"]
    return [host]


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--port {text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"--port {value} is not a port number (0-65535)")
    return value


__all__ = ["add_parser", "cmd_serve"]
