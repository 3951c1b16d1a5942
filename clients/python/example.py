"""Optimise the Branin function with 4 parallel workers and print the best point.

    npm start                       # in the repository root: the server on http://127.0.0.1:8080
    python3 clients/python/example.py [base_url] [--method prob-cmaes] [--budget 60]

PROBNES_API_KEY is sent as the Bearer key when the server requires one.
"""
import argparse
import math
import os
import time

from probnes_client import Client

BRANIN_MIN = 0.397887  # attained at (-π, 12.275), (π, 2.275) and (9.42478, 2.475)


def branin(p):
    x1, x2 = p["x1"], p["x2"]
    time.sleep(0.01)  # stands in for an expensive evaluation, so the workers overlap
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 ** 2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base_url", nargs="?", default=os.environ.get("PROBNES_URL", "http://127.0.0.1:8080"))
    ap.add_argument("--method", default="prob-cmaes")
    ap.add_argument("--budget", type=int, default=60)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--quiet", action="store_true", help="no line per result")
    args = ap.parse_args()

    client = Client(args.base_url, api_key=os.environ.get("PROBNES_API_KEY"))
    study = client.create_study({
        "name": "branin-example",
        "direction": "minimize",
        "method": args.method,
        "batch_size": args.workers,
        "parameters": [
            {"name": "x1", "type": "float", "bounds": [-5, 10], "prior": {"mean": 2.5, "std": 3.75}},
            {"name": "x2", "type": "float", "bounds": [0, 15], "prior": {"mean": 7.5, "std": 3.75}},
        ],
        "known_optimum": BRANIN_MIN,
        "seed": 7,
    })
    print(f"study {study['id']} ({study['method']}); dashboard: {args.base_url}/ui/studies/{study['id']}")
    result = client.optimize(branin, study["id"], budget=args.budget, workers=args.workers,
                             client_prefix="branin", progress=not args.quiet)
    best = result.best["observed"]
    print(f"{result.completed} evaluations ({result.failed} failed) in {result.elapsed:.1f}s by {sorted(result.by_client)}")
    print(f"best value {best['value']:.6f} at x1={best['parameters']['x1']:.4f}, x2={best['parameters']['x2']:.4f} "
          f"(regret {best['value'] - BRANIN_MIN:.2e})")


if __name__ == "__main__":
    main()
