"""Validates layoutprof's JSON documents against a JSON Schema: a report against the
repository's (draft 2020-12), a SARIF log against SARIF 2.1.0's published one (draft 4); the
schema's own "$schema" picks the draft.

usage: /usr/bin/python3 validate_report.py SCHEMA DOCUMENT...   (exit 1 when one is invalid)
"""
import json
import sys

import jsonschema


def main() -> int:
    schema = json.load(open(sys.argv[1]))
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    validator = cls(schema)
    status = 0
    for path in sys.argv[2:]:
        errors = sorted(validator.iter_errors(json.load(open(path))), key=lambda e: list(e.path))
        for e in errors[:5]:
            print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
        status |= bool(errors)
    return status


if __name__ == "__main__":
    sys.exit(main())
