# Prints the commands of the first fix `doctor --json` gives for a package, one per line.
import json
import sys

doc, package = json.load(open(sys.argv[1])), sys.argv[2]


def walk(o):
    if isinstance(o, dict):
        if o.get("package") == package and o.get("fixes"):
            print("\n".join(o["fixes"][0].get("commands", [])))
            return True
        return any(walk(v) for v in o.values())
    if isinstance(o, list):
        return any(walk(v) for v in o)
    return False


walk(doc)
