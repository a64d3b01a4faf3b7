"""`make soak`: 1,000 injected faults with a fixed (printed, settable) seed; exit 1 on any
violation."""

from __future__ import annotations

import argparse
import sys

from tests.soak.runner import DEFAULT_SEED, SoakConfig, run_soak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="RNG seed (printed)")
    parser.add_argument("--faults", type=int, default=1000, help="faults to inject")
    parser.add_argument(
        "--checkpoint-every", type=int, default=50, help="faults between convergence checks"
    )
    args = parser.parse_args(argv)
    if args.faults < 1 or args.checkpoint_every < 1:
        parser.error("--faults and --checkpoint-every must be at least 1")
    print(f"soak: seed={args.seed} faults={args.faults}", flush=True)
    result = run_soak(
        SoakConfig(
            seed=args.seed,
            faults=args.faults,
            checkpoint_every=args.checkpoint_every,
            progress=lambda line: print(line, flush=True),
        )
    )
    for violation in result.violations:
        print(f"soak: VIOLATION: {violation}", flush=True)
    print(result.summary(), flush=True)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
