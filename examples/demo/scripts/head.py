"""Print the first lines of a text file."""

import argparse
import sys

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("path")
parser.add_argument("-n", "--lines", type=int, default=10)
args = parser.parse_args()
try:
    with open(args.path, encoding="utf-8", errors="replace") as f:
        for i, line in enumerate(f):
            if i >= args.lines:
                break
            sys.stdout.write(line)
except OSError as exc:
    sys.exit(f"head: cannot read {args.path}: {exc.strerror}")
