"""`make soak`: 1,000 injected faults with a fixed (printed, settable) seed; exit 1 on any
violation. Against a real kube-apiserver + etcd when their binaries are found (RealApiServer:
$KUBEINFORMERS_APISERVER_ASSETS, $KUBEBUILDER_ASSETS or ../shared/realk8s), else against
LocalApiServer; `--server local|real` chooses."""

from __future__ import annotations

import argparse
import sys

from kubeinformers.testing.real_apiserver import find_real_apiserver_assets, missing_assets_message
from tests.soak.runner import DEFAULT_SEED, SoakConfig, run_soak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="RNG seed (printed)")
    parser.add_argument("--faults", type=int, default=1000, help="faults to inject")
    parser.add_argument(
        "--checkpoint-every", type=int, default=50, help="faults between convergence checks"
    )
    parser.add_argument(
        "--server",
        choices=("real", "local"),
        default=None,
        help="a real kube-apiserver + etcd (default when their binaries are found) or "
        "LocalApiServer",
    )
    args = parser.parse_args(argv)
    if args.faults < 1 or args.checkpoint_every < 1:
        parser.error("--faults and --checkpoint-every must be at least 1")
    if args.server is None:
        args.server = "real" if find_real_apiserver_assets() is not None else "local"
        if args.server == "local":
            print(f"soak: using LocalApiServer ({missing_assets_message()})", flush=True)
    elif args.server == "real" and find_real_apiserver_assets() is None:
        parser.error(f"--server real: {missing_assets_message()}")
    print(f"soak: server={args.server} seed={args.seed} faults={args.faults}", flush=True)
    result = run_soak(
        SoakConfig(
            seed=args.seed,
            faults=args.faults,
            checkpoint_every=args.checkpoint_every,
            progress=lambda line: print(line, flush=True),
            server=args.server,
        )
    )
    for violation in result.violations:
        print(f"soak: VIOLATION: {violation}", flush=True)
    print(result.summary(), flush=True)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
