"""List the entries of a folder, sorted, one per line (folders end with /)."""

import argparse
import fnmatch
import os
import sys

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("folder", nargs="?", default=".")
parser.add_argument("--pattern", default="*")
parser.add_argument("--kind", choices=["file", "dir", "any"], default="any")
args = parser.parse_args()
try:
    names = sorted(os.listdir(args.folder))
except OSError as exc:
    sys.exit(f"ls: cannot list {args.folder}: {exc.strerror}")
for name in names:
    is_dir = os.path.isdir(os.path.join(args.folder, name))
    if fnmatch.fnmatch(name, args.pattern) and args.kind in ("any", "dir" if is_dir else "file"):
        print(name + ("/" if is_dir else ""))
