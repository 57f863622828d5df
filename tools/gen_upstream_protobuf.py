"""Generate ``src/kubeprio/apiserver/upstream_protobuf.json`` from upstream's .proto files.

Why: kubectl's typed clients send built-in objects as Kubernetes protobuf
(``Content-Type: application/vnd.kubernetes.protobuf``): ``kubectl create priorityclass``,
``create deployment``, ``create poddisruptionbudget``, ``create namespace``, ``create
job``. Decoding them needs each message's field numbers, names and types, which only
upstream's ``generated.proto`` files state. This script parses them and writes the
messages reachable from the kinds kubeprio serves (the roots of
``upstream_fields.json``, so the two tables never list different kinds)::

    {"roots": {"PriorityClass": "k8s.io.api.scheduling.v1.PriorityClass", ...},
     "messages": {"k8s.io.api.scheduling.v1.PriorityClass":
                      {"2": ["value", "optional", "int32"], ...}, ...}}

A field is ``[json name, "optional" | "repeated" | "map" | "inline", type, omit zero]``:
``omit zero`` is 1 when the Go field is a non-pointer tagged ``omitempty`` (read from the
package's ``types.go``), so Go's JSON leaves its zero value out; the type is a proto
scalar type (``string``, ``int32``, ...) or a full message name; a map's key is always a
string and its type is the value's. The JSON name is the Go field's ``json`` tag where
it differs from the proto name (``BoundObjectReference``'s proto ``uID`` is JSON
``uid``). ``inline`` marks an embedded Go struct (``Probe``'s ``handler``, ``Volume``'s
``volumeSource``): its fields sit in the parent's JSON object.
The proto files do not say which fields are embedded, so the field names of the JSON
table (``upstream_fields.json``, from the official client) decide: a field JSON does not
know, whose message's fields JSON has in the parent, is embedded. The messages the decoder turns into JSON scalars (Time,
Quantity, IntOrString, RawExtension, ...) are listed like the others.

The .proto files are read from git mirrors of k8s.io/api and k8s.io/apimachinery (not
part of this repository), at the release tag kubeprio reproduces (``v0.32.9``, Kubernetes
v1.32.9; ``--ref`` for another)::

    .venv/bin/python tools/gen_upstream_protobuf.py --api DIR --apimachinery DIR

then review the diff. Field numbers never change upstream; a newer tag only adds fields.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from upstream_go import release_arguments

OUT = Path(__file__).resolve().parent.parent / "src/kubeprio/apiserver/upstream_protobuf.json"
JSON_TABLE = OUT.with_name("upstream_fields.json")

FIELD = re.compile(r"^\s*(optional|repeated)\s+(\S+)\s+(\w+)\s*=\s*(\d+)\s*(?:\[.*\])?;")
MAP_FIELD = re.compile(r"^\s*map<\s*string\s*,\s*(\S+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;")


def read_source(import_path: str, repos: dict[str, str], ref: str) -> str:
    """The text of ``k8s.io/<repo>/<path>`` (a .proto or .go file) at ``ref`` of its mirror."""
    _, repo, path = import_path.split("/", 2)
    return subprocess.run(
        ["git", "--git-dir", repos[repo], "show", f"{ref}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def parse(text: str) -> tuple[str, list[str], dict[str, dict[str, list[str]]]]:
    """Package, imports and messages (fields by number) of one proto file."""
    package = re.search(r"^package\s+([\w.]+);", text, re.MULTILINE)
    assert package, "no package line"
    imports = re.findall(r'^import\s+"([^"]+)";', text, re.MULTILINE)
    messages: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for line in text.splitlines():
        stripped = line.split("//", 1)[0].strip()
        opening = re.match(r"^message\s+(\w+)\s*\{", stripped)
        if opening:
            current = messages.setdefault(f"{package.group(1)}.{opening.group(1)}", {})
            continue
        if stripped == "}":
            current = None
            continue
        if current is None:
            continue
        field = FIELD.match(stripped)
        if field:
            label, type_name, name, number = field.groups()
            current[number] = [name, label, type_name]
            continue
        map_field = MAP_FIELD.match(stripped)
        if map_field:
            value_type, name, number = map_field.groups()
            current[number] = [name, "map", value_type]
    return package.group(1), imports, messages


GO_FIELD = re.compile(r'^\s*(\S+)(?:\s+(\S+))?\s+`json:"([^"]*)"[^`]*protobuf:"[^"]*name=(\w+)')


def go_struct_fields(text: str, package: str) -> Iterator[tuple[str, re.Match[str]]]:
    """Each field line of each Go struct in ``text``: the struct (as its proto message
    name) and the ``GO_FIELD`` match (name, type, tag, proto field name)."""
    struct: str | None = None
    for line in text.splitlines():
        opening = re.match(r"^type\s+(\w+)\s+struct\s*\{", line)
        if opening:
            struct = f"{package}.{opening.group(1)}"
            continue
        if line.startswith("}"):
            struct = None
            continue
        field = GO_FIELD.match(line) if struct is not None else None
        if field and struct is not None:
            yield struct, field


def go_zero_rules(text: str, package: str) -> dict[str, dict[str, bool]]:
    """Per Go struct (as its proto message name), per proto field: whether Go's JSON leaves
    a zero value out (a non-pointer field tagged ``omitempty``)."""
    rules: dict[str, dict[str, bool]] = {}
    for struct, field in go_struct_fields(text, package):
        go_type = field.group(2) or field.group(1)  # an embedded struct has no name
        rules.setdefault(struct, {})[field.group(4)] = not go_type.startswith(
            "*"
        ) and "omitempty" in field.group(3)
    return rules


def go_json_names(text: str, package: str) -> dict[str, dict[str, str]]:
    """Per Go struct (as its proto message name), the JSON names that differ from the proto
    field names (``BoundObjectReference``'s proto ``uID`` is JSON ``uid``)."""
    names: dict[str, dict[str, str]] = {}
    for struct, field in go_struct_fields(text, package):
        json_name = field.group(3).split(",", 1)[0]
        if json_name not in ("", "-") and json_name != field.group(4):
            names.setdefault(struct, {})[field.group(4)] = json_name
    return names


def qualify(type_name: str, package: str, known: dict[str, dict[str, list[str]]]) -> str:
    """A field type as a full message name (scalars stay as they are)."""
    if type_name.startswith("."):
        return type_name[1:]
    local = f"{package}.{type_name}"
    return local if local in known else type_name


def proto_roots(json_table: dict[str, Any]) -> dict[str, str]:
    """The root message of each kind: the JSON table's roots, as proto names.

    ``io.k8s.api.core.v1.Pod`` (OpenAPI) is ``k8s.io.api.core.v1.Pod`` (proto), so both
    tables serve the same kinds without a second list to keep.
    """
    types = json_table["types"]
    return {
        kind: "k8s.io." + types[client]["schema"].removeprefix("io.k8s.")
        for kind, client in json_table["roots"].items()
    }


def mark_embedded(messages: dict[str, dict[str, list[str]]], json_types: dict[str, Any]) -> None:
    """Relabel the fields that are embedded Go structs ``inline`` (see the module doc)."""
    json_fields = {entry["schema"]: set(entry["fields"]) for entry in json_types.values()}

    def flat_names(message: str) -> set[str]:
        names: set[str] = set()
        for name, label, type_name, *_ in messages[message].values():
            names |= flat_names(type_name) if label == "inline" else {name}
        return names

    changed = True
    while changed:  # an embedded struct may embed another (EphemeralContainerCommon)
        changed = False
        for message, fields in messages.items():
            known = json_fields.get("io.k8s." + message.removeprefix("k8s.io."))
            if known is None:
                continue
            for entry in fields.values():
                name, label, type_name = entry[:3]
                embedded = label == "optional" and name not in known and type_name in messages
                if embedded and flat_names(type_name) <= known:
                    entry[1] = "inline"
                    changed = True


def main() -> None:
    args = release_arguments(__doc__.splitlines()[0])
    repos = {"api": args.api, "apimachinery": args.apimachinery}
    json_table = json.loads(JSON_TABLE.read_text())
    roots = proto_roots(json_table)
    pending = sorted(
        {
            f"k8s.io/api/{root.split('.')[3]}/{root.split('.')[4]}/generated.proto"
            for root in roots.values()
            if root.startswith("k8s.io.api.")
        }
        | {"k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto"}
    )
    seen: set[str] = set()
    all_messages: dict[str, dict[str, list[str]]] = {}
    packages: dict[str, str] = {}
    zero_rules: dict[str, dict[str, bool]] = {}
    json_names: dict[str, dict[str, str]] = {}
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        package, imports, messages = parse(read_source(path, repos, args.ref))
        for name in messages:
            packages[name] = package
        all_messages.update(messages)
        pending.extend(imports)
        types_go = path.replace("generated.proto", "types.go")
        # A package without types.go (runtime, intstr, resource): the defaults apply.
        with contextlib.suppress(subprocess.CalledProcessError):
            go_source = read_source(types_go, repos, args.ref)
            zero_rules.update(go_zero_rules(go_source, package))
            json_names.update(go_json_names(go_source, package))
    for name, fields in all_messages.items():
        rules = zero_rules.get(name, {})
        for entry in fields.values():
            entry[2] = qualify(entry[2], packages[name], all_messages)
            # Without Go source, only an empty string is left out.
            entry.append(int(rules.get(entry[0], entry[2] == "string")))
            entry[0] = json_names.get(name, {}).get(entry[0], entry[0])
    reachable: dict[str, dict[str, list[str]]] = {}
    stack = list(roots.values())
    while stack:
        name = stack.pop()
        if name in reachable:
            continue
        fields = all_messages[name]
        reachable[name] = dict(sorted(fields.items(), key=lambda item: int(item[0])))
        stack.extend(entry[2] for entry in fields.values() if entry[2] in all_messages)
    mark_embedded(reachable, json_table["types"])
    table = {"roots": roots, "messages": dict(sorted(reachable.items()))}
    OUT.write_text(json.dumps(table, indent=0, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({len(reachable)} messages from {len(seen)} files)")


if __name__ == "__main__":
    main()
