#!/usr/bin/env python3
"""Checks that the tensord.v1 protos make no breaking change against a checked-in baseline.

The baseline (proto/compat/tensord_v1.binpb) is a FileDescriptorSet of the protos as released.
The current protos are compiled with protoc into a temporary directory and compared with it,
element by element, by fully qualified name and by field number:

  breaking   a message, enum, service or method removed; a method's input or output type or its
             streaming changed; a field removed whose number is not now `reserved`; a field's
             number/name pair changed (renamed, renumbered, or its number reused); a field's type,
             message/enum type or label changed (repeated, explicit presence with `optional`,
             membership of a oneof); a field that uses a number the baseline reserved; an enum
             value's number removed (unless reserved) or renamed; the package renamed.
  allowed    new messages, fields, enums, enum values, services and methods.

Exit status: 0 when nothing breaks, 1 when something does (each change on its own line), 2 when
the check cannot run (no protoc, a proto that does not compile, no baseline).

--update rewrites the baseline from the current protos. Use it only for intentional additions,
when the check reports no breaking change; it refuses otherwise. A breaking change belongs in a
new package (tensord.v2) next to this one, not in tensord.v1.
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PROTO_ROOT = os.path.dirname(HERE)                 # proto/
DEFAULT_BASELINE = os.path.join(HERE, "tensord_v1.binpb")
DEFAULT_PACKAGE = "tensord.v1"

FDP = descriptor_pb2.FieldDescriptorProto
_TYPE_NAMES = {v: k[len("TYPE_"):].lower() for k, v in FDP.Type.items()}


# ---- Building the current descriptor set ---------------------------------------------------------

def find_protoc(explicit=None):
    """protoc from the argument, else $PROTOC, else PATH; None when there is none."""
    for candidate in (explicit, os.environ.get("PROTOC")):
        if candidate:
            return candidate
    return shutil.which("protoc")


def default_proto_files(proto_root, package=DEFAULT_PACKAGE):
    """The package's .proto files relative to proto_root (tensord.v1 -> tensord/v1/*.proto)."""
    pattern = os.path.join(proto_root, *package.split("."), "*.proto")
    return sorted(os.path.relpath(p, proto_root) for p in glob.glob(pattern))


def build_descriptor_set(protoc, proto_root, files):
    """Compiles `files` (relative to proto_root) and returns the serialized FileDescriptorSet."""
    if not files:
        raise RuntimeError(f"no .proto files to compile under {proto_root}")
    with tempfile.TemporaryDirectory(prefix="proto-compat-") as tmp:
        out = os.path.join(tmp, "current.binpb")
        cmd = [protoc, "--include_imports", f"--descriptor_set_out={out}",
               f"--proto_path={proto_root}", *files]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            raise RuntimeError(f"cannot run protoc ({protoc}): {e}") from e
        if proc.returncode != 0:
            raise RuntimeError(f"protoc failed:\n{proc.stderr.strip()}")
        with open(out, "rb") as f:
            return f.read()


def parse_descriptor_set(data):
    fds = descriptor_pb2.FileDescriptorSet()
    fds.ParseFromString(data)
    return fds


# ---- Indexing a descriptor set ---------------------------------------------------------------

class Index:
    """The package's messages, enums and services by fully qualified name (no leading dot)."""

    def __init__(self, fds, package):
        self.package = package
        self.files = {f.name: f.package for f in fds.file}
        self.messages = {}
        self.enums = {}
        self.services = {}
        for f in fds.file:
            if f.package != package:
                continue
            prefix = f.package
            for m in f.message_type:
                self._add_message(prefix, m)
            for e in f.enum_type:
                self.enums[f"{prefix}.{e.name}"] = e
            for s in f.service:
                self.services[f"{prefix}.{s.name}"] = s

    def _add_message(self, prefix, m):
        name = f"{prefix}.{m.name}"
        self.messages[name] = m
        for nested in m.nested_type:
            self._add_message(name, nested)
        for e in m.enum_type:
            self.enums[f"{name}.{e.name}"] = e

    def method_count(self):
        return sum(len(s.method) for s in self.services.values())


def _in_ranges(number, ranges, inclusive_end):
    for r in ranges:
        if r.start <= number < r.end or (inclusive_end and number == r.end):
            return True
    return False


def _field_type(field):
    """The field's type as .proto spells it: int64, tensord.v1.DType, …"""
    if field.type_name:
        return field.type_name.lstrip(".")
    return _TYPE_NAMES.get(field.type, str(field.type))


def _field_label(message, field):
    """repeated / optional (explicit presence) / singular / oneof <name>."""
    if field.label == FDP.LABEL_REPEATED:
        return "repeated"
    if field.label == FDP.LABEL_REQUIRED:
        return "required"
    if field.HasField("oneof_index"):
        if field.proto3_optional:
            return "optional"
        return f"oneof {message.oneof_decl[field.oneof_index].name}"
    return "singular"


def _streaming(method):
    return ("stream " if method.client_streaming else "") + "in, " + \
           ("stream " if method.server_streaming else "") + "out"


# ---- The comparison --------------------------------------------------------------------------

class Report:
    def __init__(self):
        self.breaking = []
        self.additions = []
        self.messages_checked = 0
        self.methods_checked = 0


def compare(baseline_fds, current_fds, package=DEFAULT_PACKAGE):
    """Compares two FileDescriptorSets for the package; returns a Report."""
    rep = Report()
    old = Index(baseline_fds, package)
    new = Index(current_fds, package)
    rep.messages_checked = len(old.messages)
    rep.methods_checked = old.method_count()

    # The package: every baseline file of it must still exist and still be in it.
    for fname, pkg in sorted(old.files.items()):
        if pkg != package:
            continue
        if fname in new.files and new.files[fname] != pkg:
            rep.breaking.append(
                f"package renamed: {fname} declares package {new.files[fname]}, "
                f"was {pkg}")
    if rep.breaking:
        return rep  # renamed: every element would be reported as removed
    if old.messages or old.services or old.enums:
        if package not in new.files.values():
            rep.breaking.append(
                f"package {package} is gone: no current .proto file declares it "
                f"(renamed?)")
            return rep

    for name, m in sorted(old.messages.items()):
        if name not in new.messages:
            rep.breaking.append(f"message {name} removed")
            continue
        _compare_message(rep, name, m, new.messages[name])
    for name in sorted(set(new.messages) - set(old.messages)):
        rep.additions.append(f"message {name}")

    for name, e in sorted(old.enums.items()):
        if name not in new.enums:
            rep.breaking.append(f"enum {name} removed")
            continue
        _compare_enum(rep, name, e, new.enums[name])
    for name in sorted(set(new.enums) - set(old.enums)):
        rep.additions.append(f"enum {name}")

    for name, s in sorted(old.services.items()):
        if name not in new.services:
            rep.breaking.append(
                f"service {name} removed (with its {len(s.method)} methods)")
            continue
        _compare_service(rep, name, s, new.services[name])
    for name in sorted(set(new.services) - set(old.services)):
        rep.additions.append(f"service {name}")
    return rep


def _compare_message(rep, name, old, new):
    old_by_num = {f.number: f for f in old.field}
    new_by_num = {f.number: f for f in new.field}
    new_by_name = {f.name: f for f in new.field}

    for num, f in sorted(old_by_num.items()):
        g = new_by_num.get(num)
        if g is None:
            moved = new_by_name.get(f.name)
            if moved is not None:
                rep.breaking.append(
                    f"field {name}.{f.name} renumbered: {num} -> {moved.number}")
            elif _in_ranges(num, new.reserved_range, inclusive_end=False):
                pass  # removed and its number reserved: allowed
            else:
                rep.breaking.append(
                    f"field {name}.{f.name} = {num} removed without reserving its number "
                    f"(add `reserved {num};` if the removal is intended)")
            continue
        if g.name != f.name:
            rep.breaking.append(
                f"field {num} of {name} renamed or reused: was {f.name}, now {g.name}")
        if _field_type(g) != _field_type(f):
            rep.breaking.append(
                f"field {name}.{f.name} = {num} changed type: "
                f"{_field_type(f)} -> {_field_type(g)}")
        old_label, new_label = _field_label(old, f), _field_label(new, g)
        if old_label != new_label:
            rep.breaking.append(
                f"field {name}.{f.name} = {num} changed label: {old_label} -> {new_label}")

    for num, g in sorted(new_by_num.items()):
        if num in old_by_num:
            continue
        if _in_ranges(num, old.reserved_range, inclusive_end=False):
            rep.breaking.append(
                f"field {name}.{g.name} = {num} uses a number the baseline reserved")
        elif g.name not in {f.name for f in old.field}:
            rep.additions.append(f"field {name}.{g.name} = {num}")


def _compare_enum(rep, name, old, new):
    new_by_num = {}
    for v in new.value:
        new_by_num.setdefault(v.number, []).append(v.name)
    for v in old.value:
        names = new_by_num.get(v.number)
        if names is None:
            if not _in_ranges(v.number, new.reserved_range, inclusive_end=True):
                rep.breaking.append(
                    f"enum value {name}.{v.name} = {v.number} removed without reserving "
                    f"its number")
        elif v.name not in names:
            rep.breaking.append(
                f"enum value {v.number} of {name} renamed: was {v.name}, now "
                f"{', '.join(names)}")
    old_nums = {v.number for v in old.value}
    for v in new.value:
        if v.number not in old_nums:
            rep.additions.append(f"enum value {name}.{v.name} = {v.number}")


def _compare_service(rep, name, old, new):
    new_methods = {m.name: m for m in new.method}
    for m in old.method:
        n = new_methods.get(m.name)
        if n is None:
            rep.breaking.append(f"method {name}.{m.name} removed")
            continue
        if n.input_type != m.input_type:
            rep.breaking.append(
                f"method {name}.{m.name} changed its request type: "
                f"{m.input_type.lstrip('.')} -> {n.input_type.lstrip('.')}")
        if n.output_type != m.output_type:
            rep.breaking.append(
                f"method {name}.{m.name} changed its response type: "
                f"{m.output_type.lstrip('.')} -> {n.output_type.lstrip('.')}")
        if (n.client_streaming, n.server_streaming) != (m.client_streaming, m.server_streaming):
            rep.breaking.append(
                f"method {name}.{m.name} changed streaming: ({_streaming(m)}) -> "
                f"({_streaming(n)})")
    old_names = {m.name for m in old.method}
    for m in new.method:
        if m.name not in old_names:
            rep.additions.append(f"method {name}.{m.name}")


# ---- Command line ----------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Fails on a breaking change to the tensord.v1 protos against the "
                    "checked-in descriptor set.",
        epilog="Use --update only for intentional additions, when the check reports no "
               "breaking change (it refuses otherwise); a breaking change needs a new package.")
    ap.add_argument("--proto-root", default=DEFAULT_PROTO_ROOT,
                    help="include root of the protos (default: the proto/ folder)")
    ap.add_argument("--baseline", default=DEFAULT_BASELINE,
                    help="the baseline FileDescriptorSet (default: proto/compat/tensord_v1.binpb)")
    ap.add_argument("--protoc", default=None,
                    help="protoc to compile with (default: $PROTOC, else protoc on PATH)")
    ap.add_argument("--package", default=DEFAULT_PACKAGE,
                    help="the package to check (default: tensord.v1)")
    ap.add_argument("--update", action="store_true",
                    help="rewrite the baseline from the current protos (additions only)")
    ap.add_argument("files", nargs="*",
                    help="the .proto files, relative to --proto-root (default: all of the "
                         "package's folder, tensord/v1/*.proto)")
    args = ap.parse_args(argv)

    protoc = find_protoc(args.protoc)
    if not protoc:
        print("check_compat: no protoc (pass --protoc or set PROTOC)", file=sys.stderr)
        return 2
    files = args.files or default_proto_files(args.proto_root, args.package)
    try:
        current_bytes = build_descriptor_set(protoc, args.proto_root, files)
    except RuntimeError as e:
        print(f"check_compat: {e}", file=sys.stderr)
        return 2
    current = parse_descriptor_set(current_bytes)

    if not os.path.exists(args.baseline):
        if args.update:
            _write(args.baseline, current_bytes)
            print(f"baseline written: {os.path.basename(args.baseline)} (new)")
            return 0
        print(f"check_compat: no baseline at {args.baseline} (create it with --update)",
              file=sys.stderr)
        return 2
    with open(args.baseline, "rb") as f:
        baseline = parse_descriptor_set(f.read())

    rep = compare(baseline, current, args.package)
    for line in rep.breaking:
        print(f"BREAKING: {line}")
    print(f"proto compatibility: {rep.messages_checked} messages, {rep.methods_checked} "
          f"methods checked, {len(rep.breaking)} breaking changes")

    if rep.breaking:
        if args.update:
            print("baseline NOT updated: --update records additions only; undo the breaking "
                  f"changes above (a breaking change needs a new package, not {args.package})")
        else:
            print(f"{args.package} allows additions only: undo the changes above, or reserve "
                  "the numbers of removed fields")
        return 1
    if args.update:
        _write(args.baseline, current_bytes)
        print(f"baseline updated with {len(rep.additions)} additions")
    elif rep.additions:
        print(f"{len(rep.additions)} additions not yet in the baseline (allowed; record them "
              "with --update once they are released):")
        for line in rep.additions:
            print(f"  added: {line}")
    return 0


def _write(path, data):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
