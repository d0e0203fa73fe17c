"""The proto compatibility check (proto/compat/check_compat.py) against the checked-in baseline.

(a) The current protos pass against proto/compat/tensord_v1.binpb.
(b) Every kind of breaking change, made to a copy of the protos in a temporary directory, is
    reported: so the check can fail.
(c) Additions (a field, a message, an enum value, a method, a service) pass, and the same
    additions taken away again are reported as removals.

protoc comes from $PROTOC (ctest passes CMake's) or PATH.
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROTO_ROOT = os.path.join(ROOT, "proto")
CHECK = os.path.join(PROTO_ROOT, "compat", "check_compat.py")
BASELINE = os.path.join(PROTO_ROOT, "compat", "tensord_v1.binpb")
PROTO_REL = os.path.join("tensord", "v1", "tensord.proto")

PROTOC = os.environ.get("PROTOC") or shutil.which("protoc")


@pytest.fixture(scope="module", autouse=True)
def _need_protoc():
    assert PROTOC, "no protoc: set PROTOC or put protoc on PATH"


def run_check(proto_root=PROTO_ROOT, baseline=BASELINE, *extra):
    proc = subprocess.run(
        [sys.executable, CHECK, "--protoc", PROTOC, "--proto-root", proto_root,
         "--baseline", baseline, *extra],
        capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def copy_protos(tmp_path):
    """A copy of proto/tensord in tmp_path/proto; returns (root, path of tensord.proto)."""
    root = tmp_path / "proto"
    shutil.copytree(os.path.join(PROTO_ROOT, "tensord"), root / "tensord")
    return str(root), root / PROTO_REL


def message_block(text, name):
    """(start, end) of `message name { … }` in text, braces matched."""
    m = re.search(r"^(message|service|enum) %s \{" % re.escape(name), text, re.M)
    assert m, f"{name} not found in tensord.proto: update this test's mutation"
    depth, i = 0, m.end() - 1
    while True:
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return m.start(), i + 1
        i += 1


def edit(path, block, old, new):
    """Replaces the one occurrence of regex `old` inside `block` (a message, enum or service)."""
    text = path.read_text()
    start, end = message_block(text, block)
    body = text[start:end]
    body2, n = re.subn(old, new, body, flags=re.M)
    assert n == 1, f"{old!r} occurs {n} times in {block}: update this test's mutation"
    path.write_text(text[:start] + body2 + text[end:])


def replace_everywhere(path, old, new):
    text = path.read_text()
    text2, n = re.subn(old, new, text, flags=re.M)
    assert n >= 1, f"{old!r} not found in tensord.proto: update this test's mutation"
    path.write_text(text2)


def summary(out):
    m = re.search(r"proto compatibility: (\d+) messages, (\d+) methods checked, "
                  r"(\d+) breaking changes", out)
    assert m, out
    return tuple(int(g) for g in m.groups())


# ---- (a) the protos as they are ----------------------------------------------------------------

def test_current_protos_pass_against_baseline():
    rc, out = run_check()
    assert rc == 0, out
    messages, methods, breaking = summary(out)
    assert breaking == 0
    assert messages >= 40 and methods >= 19, out
    assert "BREAKING" not in out


def test_baseline_is_a_descriptor_set_of_the_package():
    from google.protobuf import descriptor_pb2
    fds = descriptor_pb2.FileDescriptorSet()
    with open(BASELINE, "rb") as f:
        fds.ParseFromString(f.read())
    files = {f.name: f.package for f in fds.file}
    assert files.get(PROTO_REL.replace(os.sep, "/")) == "tensord.v1", files
    services = [s.name for f in fds.file for s in f.service]
    assert "Tensord" in services


# ---- (b) each kind of breaking change is caught ------------------------------------------------

# (name, [(block, old regex, new)], what the report must say). block None: the whole file.
BREAKING = [
    ("field_renumbered",
     [("Error", r"int32 op_index = 4;", "int32 op_index = 9;")],
     "field tensord.v1.Error.op_index renumbered: 4 -> 9"),
    ("field_number_reused",
     [("Error", r"string kind = 3;", "string exception_class = 3;")],
     "field 3 of tensord.v1.Error renamed or reused: was kind, now exception_class"),
    ("field_scalar_type_changed",
     [("Error", r"int32 op_index = 4;", "int64 op_index = 4;")],
     "field tensord.v1.Error.op_index = 4 changed type: int32 -> int64"),
    ("field_message_type_changed",
     [("UploadResponse", r"TensorInfo tensor = 1;", "OpResult tensor = 1;")],
     "changed type: tensord.v1.TensorInfo -> tensord.v1.OpResult"),
    ("field_enum_to_int",
     [("TensorInfo", r"DType dtype = 5;", "int32 dtype = 5;")],
     "field tensord.v1.TensorInfo.dtype = 5 changed type: tensord.v1.DType -> int32"),
    ("field_removed",
     [("OpenSessionRequest", r"^\s*string client_name = 2;.*$", "")],
     "field tensord.v1.OpenSessionRequest.client_name = 2 removed without reserving"),
    ("field_no_longer_repeated",
     [("TensorInfo", r"repeated int64 sizes = 2;", "int64 sizes = 2;")],
     "field tensord.v1.TensorInfo.sizes = 2 changed label: repeated -> singular"),
    ("field_lost_presence",
     [("Slice", r"optional int64 step = 3;", "int64 step = 3;")],
     "field tensord.v1.Slice.step = 3 changed label: optional -> singular"),
    ("field_left_oneof",
     [("IndexItem", r"^\s*bool ellipsis = 4;\s*$", ""),
      ("IndexItem", r"^(\s*)oneof item \{", r"\1bool ellipsis = 4;\n\1oneof item {")],
     "field tensord.v1.IndexItem.ellipsis = 4 changed label: oneof item -> singular"),
    ("message_removed",
     [(None, r"\bLimits\b", "ServerLimits")],
     "message tensord.v1.Limits removed"),
    ("method_removed",
     [("Tensord", r"^\s*rpc QueryEvent\(.*$", "")],
     "method tensord.v1.Tensord.QueryEvent removed"),
    ("method_request_type_changed",
     [("Tensord", r"rpc RenewLease\(RenewLeaseRequest\)", "rpc RenewLease(CloseSessionRequest)")],
     "method tensord.v1.Tensord.RenewLease changed its request type: "
     "tensord.v1.RenewLeaseRequest -> tensord.v1.CloseSessionRequest"),
    ("method_response_type_changed",
     [("Tensord", r"returns \(RenewLeaseResponse\)", "returns (CloseSessionResponse)")],
     "method tensord.v1.Tensord.RenewLease changed its response type"),
    ("method_server_streaming_changed",
     [("Tensord", r"returns \(stream DownloadResponse\)", "returns (DownloadResponse)")],
     "method tensord.v1.Tensord.Download changed streaming: (in, stream out) -> (in, out)"),
    ("method_client_streaming_changed",
     [("Tensord", r"rpc Upload\(stream UploadRequest\)", "rpc Upload(UploadRequest)")],
     "method tensord.v1.Tensord.Upload changed streaming: (stream in, out) -> (in, out)"),
    ("enum_value_removed",
     [("DType", r"^\s*DTYPE_BFLOAT16 = 8;.*$", "")],
     "enum value tensord.v1.DType.DTYPE_BFLOAT16 = 8 removed"),
    ("enum_value_renamed",
     [("DType", r"DTYPE_BFLOAT16 = 8;", "DTYPE_BF16 = 8;")],
     "enum value 8 of tensord.v1.DType renamed: was DTYPE_BFLOAT16, now DTYPE_BF16"),
    ("package_renamed",
     [(None, r"^package tensord\.v1;", "package tensord.v1beta;")],
     "package renamed: tensord/v1/tensord.proto declares package tensord.v1beta"),
]


@pytest.mark.parametrize("name,edits,expected", BREAKING, ids=[b[0] for b in BREAKING])
def test_breaking_change_is_reported(tmp_path, name, edits, expected):
    root, proto = copy_protos(tmp_path)
    for block, old, new in edits:
        if block is None:
            replace_everywhere(proto, old, new)
        else:
            edit(proto, block, old, new)
    rc, out = run_check(root)
    assert rc == 1, out
    assert expected in out, out
    assert "BREAKING: " in out
    assert summary(out)[2] >= 1


def test_removed_field_with_reserved_number_passes(tmp_path):
    root, proto = copy_protos(tmp_path)
    edit(proto, "OpenSessionRequest", r"^(\s*)string client_name = 2;.*$", r"\1reserved 2;")
    rc, out = run_check(root)
    assert rc == 0, out
    assert summary(out)[2] == 0


def test_reserved_number_reused_is_reported(tmp_path):
    # The baseline reserves a number; a later version gives it to a new field.
    root, proto = copy_protos(tmp_path)
    edit(proto, "OpenSessionRequest", r"^(\s*)string client_name = 2;.*$", r"\1reserved 2;")
    baseline = str(tmp_path / "baseline.binpb")
    rc, out = run_check(root, baseline, "--update")
    assert rc == 0, out
    edit(proto, "OpenSessionRequest", r"^(\s*)reserved 2;", r"\1bytes cookie = 2;")
    rc, out = run_check(root, baseline)
    assert rc == 1, out
    assert "field tensord.v1.OpenSessionRequest.cookie = 2 uses a number the baseline reserved" \
        in out, out


def test_every_breaking_change_is_listed(tmp_path):
    # Several changes at once: each on its own line, counted in the summary.
    root, proto = copy_protos(tmp_path)
    edit(proto, "Error", r"int32 op_index = 4;", "int64 op_index = 4;")
    edit(proto, "Tensord", r"^\s*rpc QueryEvent\(.*$", "")
    edit(proto, "DType", r"^\s*DTYPE_BFLOAT16 = 8;.*$", "")
    rc, out = run_check(root)
    assert rc == 1, out
    assert out.count("BREAKING: ") == 3, out
    assert summary(out)[2] == 3


def test_update_refuses_a_breaking_change(tmp_path):
    root, proto = copy_protos(tmp_path)
    baseline = tmp_path / "baseline.binpb"
    shutil.copy(BASELINE, baseline)
    before = baseline.read_bytes()
    edit(proto, "Tensord", r"^\s*rpc QueryEvent\(.*$", "")
    rc, out = run_check(root, str(baseline), "--update")
    assert rc == 1, out
    assert "baseline NOT updated" in out
    assert baseline.read_bytes() == before


def test_proto_that_does_not_compile_is_an_error(tmp_path):
    root, proto = copy_protos(tmp_path)
    edit(proto, "Error", r"int32 op_index = 4;", "int32 op_index = ;")
    rc, out = run_check(root)
    assert rc == 2, out
    assert "protoc failed" in out


# ---- (c) additions are allowed -----------------------------------------------------------------

def add_everything(proto):
    """Additions of every kind; numbers far from any a real version would pick next."""
    edit(proto, "OpenSessionRequest", r"^(\s*)string client_name = 2;(.*)$",
         r"\1string client_name = 2;\2\n\1string compat_test_note = 900;")
    edit(proto, "DType", r"^(\s*)DTYPE_FLOAT64 = 10;(.*)$",
         r"\1DTYPE_FLOAT64 = 10;\2\n\1DTYPE_COMPAT_TEST = 900;")
    edit(proto, "Tensord", r"^(\s*)rpc GetVersion\((.*)$",
         r"\1rpc CompatTestPing(CompatTestMessage) returns (CompatTestMessage);\n"
         r"\1rpc GetVersion(\2")
    text = proto.read_text()
    text += ("\nmessage CompatTestMessage {\n  string text = 1;\n"
             "  message Nested { CompatTestEnum e = 1; }\n  Nested nested = 2;\n}\n"
             "enum CompatTestEnum { COMPAT_TEST_ENUM_UNSPECIFIED = 0; }\n"
             "service CompatTestService {\n"
             "  rpc Echo(stream CompatTestMessage) returns (stream CompatTestMessage);\n}\n")
    proto.write_text(text)


def test_additions_pass(tmp_path):
    root, proto = copy_protos(tmp_path)
    add_everything(proto)
    rc, out = run_check(root)
    assert rc == 0, out
    assert summary(out)[2] == 0
    for added in ("field tensord.v1.OpenSessionRequest.compat_test_note = 900",
                  "enum value tensord.v1.DType.DTYPE_COMPAT_TEST = 900",
                  "method tensord.v1.Tensord.CompatTestPing",
                  "message tensord.v1.CompatTestMessage",
                  "message tensord.v1.CompatTestMessage.Nested",
                  "enum tensord.v1.CompatTestEnum",
                  "service tensord.v1.CompatTestService"):
        assert f"added: {added}" in out, out


def test_new_field_alone_passes(tmp_path):
    root, proto = copy_protos(tmp_path)
    edit(proto, "GetVersionResponse", r"^(\s*)string server_version = 2;(.*)$",
         r"\1string server_version = 2;\2\n\1repeated string compat_test_features = 900;")
    rc, out = run_check(root)
    assert rc == 0, out


def test_update_records_additions_and_their_removal_then_breaks(tmp_path):
    # The baseline taken with the additions; the protos without them: every addition is now a
    # removal (message, enum, service, method, field, enum value).
    root, proto = copy_protos(tmp_path)
    original = proto.read_text()
    add_everything(proto)
    baseline = str(tmp_path / "baseline.binpb")
    rc, out = run_check(root, baseline, "--update")
    assert rc == 0, out
    rc, out = run_check(root, baseline)
    assert rc == 0 and "additions not yet in the baseline" not in out, out

    proto.write_text(original)
    rc, out = run_check(root, baseline)
    assert rc == 1, out
    for removed in ("message tensord.v1.CompatTestMessage removed",
                    "message tensord.v1.CompatTestMessage.Nested removed",
                    "enum tensord.v1.CompatTestEnum removed",
                    "service tensord.v1.CompatTestService removed",
                    "method tensord.v1.Tensord.CompatTestPing removed",
                    "field tensord.v1.OpenSessionRequest.compat_test_note = 900 removed",
                    "enum value tensord.v1.DType.DTYPE_COMPAT_TEST = 900 removed"):
        assert removed in out, out
