"""stamp.py [--write | --check] — the build stamp of this tree: the digests of patches/kp/*.patch
and of kompute_ml/_native/*.{cpp,hpp}, computed as CMakeLists.txt's km_digest computes them (the
stamp compiled into kompute_ml._kp and kompute_ml._native). --write puts it into
kompute_ml/_stamp.py, --check exits 1 where that file holds another; no argument prints it."""

import hashlib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
STAMP_FILE = ROOT / "kompute_ml" / "_stamp.py"


def digest(paths):
    """sha256 over "name:sha256(content)\\n" lines in path order, first 16 hex digits."""
    lines = "".join(f"{p.name}:{hashlib.sha256(p.read_bytes()).hexdigest()}\n"
                    for p in sorted(paths))
    return hashlib.sha256(lines.encode()).hexdigest()[:16]


def build_stamp(root=ROOT):
    native = root / "kompute_ml" / "_native"
    kp = digest((root / "patches" / "kp").glob("*.patch"))
    own = digest(list(native.glob("*.cpp")) + list(native.glob("*.hpp")))
    return f"kp-0.9.0+patches.{kp} native.{own}"


def main(argv):
    stamp = build_stamp()
    if "--write" in argv:
        text = STAMP_FILE.read_text()
        STAMP_FILE.write_text(re.sub(r'BUILD_STAMP = "[^"]*"', f'BUILD_STAMP = "{stamp}"', text))
    elif "--check" in argv:
        from_file = re.search(r'BUILD_STAMP = "([^"]*)"', STAMP_FILE.read_text())[1]
        if from_file != stamp:
            sys.exit(f"kompute_ml/_stamp.py says {from_file!r}, the tree is {stamp!r}: "
                     "run python scripts/stamp.py --write")
    print(stamp)


if __name__ == "__main__":
    main(sys.argv[1:])
