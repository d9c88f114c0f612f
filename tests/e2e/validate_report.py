"""Validates layoutprof JSON reports against the repository's JSON Schema.

usage: /usr/bin/python3 validate_report.py SCHEMA REPORT...   (exit 1 on the first invalid one)
"""
import json
import sys

import jsonschema


def main() -> int:
    schema = json.load(open(sys.argv[1]))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    status = 0
    for path in sys.argv[2:]:
        errors = sorted(validator.iter_errors(json.load(open(path))), key=lambda e: list(e.path))
        for e in errors[:5]:
            print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
        status |= bool(errors)
    return status


if __name__ == "__main__":
    sys.exit(main())
