"""tools/gen_policy_table.py: the probe against the installed torch, the
committed JSON and .inc, and the emit merge.

Imports only the tool (by path) and torch: no jitamp needed.
"""
from __future__ import annotations

import glob
import importlib.util
import json
import os
import re

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "gen_policy_table.py")
POLICY_DIR = os.path.join(ROOT, "tools", "policy")
INC = os.path.join(ROOT, "csrc", "jit_autocast", "ir", "policy_table_generated.inc")


def _load_tool():
    spec = importlib.util.spec_from_file_location("gen_policy_table", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load_tool()


@pytest.fixture(scope="module")
def probed():
    """The probe of the installed torch (a few seconds)."""
    return gen.probe()


def _committed_json_path():
    return os.path.join(POLICY_DIR, f"torch-{torch.__version__}.json")


def _inc_rows():
    rows = {}
    enum_to_policy = {v: k for k, v in gen.ENUM.items()}
    pattern = re.compile(r'^JITAMP_POLICY\("([\w:]+)", "(\w*)", (\w+), (\w+)\)$')
    with open(INC) as f:
        for line in f:
            if line.startswith("//") or not line.strip() or line.startswith("JITAMP_VARIES("):
                continue
            m = pattern.match(line.rstrip("\n"))
            assert m, f"malformed row in {INC}: {line!r}"
            op = m.group(1) + ("." + m.group(2) if m.group(2) else "")
            rows[op] = {"cpu": enum_to_policy[m.group(3)], "cuda": enum_to_policy[m.group(4)]}
    return rows


def _policies(result, device):
    return {op: e[device] for op, e in result["ops"].items() if device in e}


@pytest.mark.parametrize("device", gen.DEVICES)
def test_every_autocast_op_has_a_policy(probed, device):
    """The probe (or header) decided every op the installed dispatcher
    autocasts on `device`, and nothing else."""
    assert set(_policies(probed, device)) == set(gen.autocast_ops(device))
    for op, entry in probed["ops"].items():
        if device in entry:
            assert entry[device] in gen.POLICIES, (op, entry)
            assert entry["source"][device] in ("probe", "header", "sibling"), (op, entry)


def test_probe_matches_committed_json(probed):
    path = _committed_json_path()
    if not os.path.exists(path):
        pytest.skip(f"no committed probe for torch {torch.__version__} ({os.path.relpath(path, ROOT)}); "
                    "run tools/gen_policy_table.py probe --out to add one")
    with open(path) as f:
        committed = json.load(f)
    assert committed["torch"] == torch.__version__
    for device in gen.DEVICES:
        ours, theirs = _policies(probed, device), _policies(committed, device)
        diff = {op: (theirs.get(op, "none"), ours.get(op, "none"))
                for op in set(ours) | set(theirs) if ours.get(op) != theirs.get(op)}
        assert not diff, f"{device}: {{op: (committed, probed)}} = {diff}"
        sources = {op: (committed["ops"][op]["source"][device], probed["ops"][op]["source"][device])
                   for op in ours if committed["ops"][op]["source"][device] != probed["ops"][op]["source"][device]}
        assert not sources, f"{device}: decided differently {{op: (committed, probed)}} = {sources}"


@pytest.mark.parametrize("device", gen.DEVICES)
def test_probe_matches_inc_rows(probed, device):
    """Every op the installed torch autocasts has its probed policy in the
    generated .inc."""
    rows = _inc_rows()
    ours = _policies(probed, device)
    missing = sorted(set(ours) - set(rows))
    assert not missing, f"autocast ops of torch {torch.__version__} missing from the .inc: {missing}"
    wrong = {op: (rows[op][device], p) for op, p in ours.items() if rows[op][device] != p}
    assert not wrong, f"{device}: {{op: (.inc, probed)}} = {wrong}"


def test_inc_is_emitted_from_committed_jsons():
    paths = sorted(glob.glob(os.path.join(POLICY_DIR, "*.json")))
    assert paths, "no committed probe JSONs"
    probes = []
    for path in paths:
        with open(path) as f:
            probes.append(json.load(f))
    with open(INC) as f:
        assert f.read() == gen.emit(probes), "policy_table_generated.inc is stale: re-run emit"


def _probe(version, ops):
    return {"torch": version, "ops": ops}


def test_emit_format():
    text = gen.emit([
        _probe("2.13.0+cpu", {
            "aten::mm": {"cpu": "lower_precision_fp", "cuda": "lower_precision_fp"},
            "aten::conv2d.padding": {"cpu": "lower_precision_fp"},
            "aten::norm.Scalar": {"cuda": "fp32_append_dtype"},
        }),
        _probe("2.14.1", {
            "aten::mm": {"cpu": "lower_precision_fp", "cuda": "lower_precision_fp"},
            "aten::linalg_matrix_sqrth": {"cpu": "fp32", "cuda": "fp32"},
            "aten::binary_cross_entropy": {"cpu": "fp32", "cuda": "banned"},
            "aten::sum": {"cpu": "none", "cuda": "fp32_set_opt_dtype"},
            "aten::cat": {"cpu": "promote"},
        }),
    ])
    lines = text.splitlines()
    assert lines[0] == ("// Generated by tools/gen_policy_table.py from torch 2.13.0+cpu, 2.14.1 -- do not edit.")
    assert lines[3] == "// JITAMP_POLICY(op, overload, cpu policy, cuda policy)"
    blank = lines.index("")
    assert lines[blank + 4] == "// JITAMP_VARIES(op, overload, device, where it is autocast)"
    # CPU ops one of the two versions autocasts; none on CUDA, where the CPU
    # wheel (2.13.0+cpu) has no say.
    assert lines[blank + 5:] == [
        'JITAMP_VARIES("aten::binary_cross_entropy", "", "cpu", "autocast on cpu in torch 2.14.1; not in 2.13.0")',
        'JITAMP_VARIES("aten::cat", "", "cpu", "autocast on cpu in torch 2.14.1; not in 2.13.0")',
        'JITAMP_VARIES("aten::conv2d", "padding", "cpu", "autocast on cpu in torch 2.13.0; not in 2.14.1")',
        'JITAMP_VARIES("aten::linalg_matrix_sqrth", "", "cpu", "autocast on cpu in torch 2.14.1; not in 2.13.0")',
    ]
    assert lines[4:blank] == [
        'JITAMP_POLICY("aten::binary_cross_entropy", "", Fp32, Banned)',
        'JITAMP_POLICY("aten::cat", "", Promote, None)',
        'JITAMP_POLICY("aten::conv2d", "padding", LowerPrecisionFp, None)',
        'JITAMP_POLICY("aten::linalg_matrix_sqrth", "", Fp32, Fp32)',
        'JITAMP_POLICY("aten::mm", "", LowerPrecisionFp, LowerPrecisionFp)',
        'JITAMP_POLICY("aten::norm", "Scalar", None, Fp32AppendDtype)',
        'JITAMP_POLICY("aten::sum", "", None, Fp32SetOptDtype)',
    ]


def test_emit_union_over_versions():
    """An op autocast on a device in any version gets that policy; a version
    without the op (or without autocast on that device) is no conflict."""
    merged = gen.merge([
        _probe("2.9.1", {"aten::prod.dim_Dimname": {"cpu": "fp32", "cuda": "fp32_set_opt_dtype"}}),
        _probe("2.13.0", {"aten::rms_norm": {"cuda": "fp32"}}),
        _probe("2.14.1", {"aten::rms_norm": {"cpu": "none", "cuda": "fp32"}}),
    ])
    assert merged == {
        "aten::prod.dim_Dimname": {"cpu": "fp32", "cuda": "fp32_set_opt_dtype"},
        "aten::rms_norm": {"cpu": "none", "cuda": "fp32"},
    }


def test_varies_names_the_versions_that_autocast_an_op():
    """Ranges over the probed versions in order; CUDA among CUDA wheels only;
    a "none" entry is no autocast."""
    probes = [
        _probe("2.4.1+cu121", {"aten::qr": {"cpu": "fp32"}, "aten::mm": {"cpu": "lower_precision_fp"}}),
        _probe("2.11.0+cu130", {"aten::qr": {"cpu": "fp32"}, "aten::mm": {"cpu": "lower_precision_fp"},
                                "aten::rms_norm": {"cuda": "none"}}),
        _probe("2.13.0+cpu", {"aten::qr": {"cpu": "fp32"}, "aten::mm": {"cpu": "lower_precision_fp"}}),
        _probe("2.12.0+cu130", {"aten::rms_norm": {"cuda": "fp32"}, "aten::mm": {"cpu": "lower_precision_fp"}}),
        _probe("2.15.0+cu132", {"aten::rms_norm": {"cuda": "fp32"}, "aten::mm": {"cpu": "lower_precision_fp"}}),
    ]
    assert gen.varies(probes) == [
        ("aten::qr", "cpu", "autocast on cpu in torch 2.4.1 to 2.11.0, 2.13.0; not in 2.12.0, 2.15.0"),
        ("aten::rms_norm", "cuda", "autocast on cuda in torch 2.12.0 to 2.15.0; not in 2.4.1 to 2.11.0"),
    ]


def test_emit_fails_on_conflicting_versions():
    probes = [
        _probe("2.13.0", {"aten::addmm": {"cpu": "lower_precision_fp", "cuda": "lower_precision_fp"}}),
        _probe("2.14.1", {"aten::addmm": {"cpu": "fp32", "cuda": "lower_precision_fp"}}),
        _probe("2.15.0", {"aten::addmm": {"cpu": "lower_precision_fp"}}),
    ]
    with pytest.raises(gen.PolicyError) as err:
        gen.emit(probes)
    message = str(err.value)
    assert "aten::addmm on cpu" in message
    assert "torch 2.13.0: lower_precision_fp" in message and "torch 2.14.1: fp32" in message
    assert "cuda" not in message


def test_emit_cli_exit_code(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_probe("1.0", {"aten::mm": {"cpu": "fp32"}})))
    b.write_text(json.dumps(_probe("2.0", {"aten::mm": {"cpu": "promote"}})))
    out = tmp_path / "t.inc"
    assert gen.main(["emit", str(a), str(b), "--out", str(out)]) == 1
    assert "torch 1.0: fp32" in capsys.readouterr().err
    assert not out.exists()


def test_header_parser_reads_cuda_lists():
    header = gen.header_policies()
    if not header:
        pytest.skip(f"torch {torch.__version__} ships no policy lists in ATen/autocast_mode.h")
    assert header["aten::mm"] == "lower_precision_fp"
    assert header["aten::softmax.int"] == "fp32_set_opt_dtype"
    assert header["aten::norm.Scalar"] == "fp32_append_dtype"
    assert header["aten::norm.ScalarOpt_dim"] == "fp32_append_dtype"
    assert header["aten::index_put"] == "promote"
    assert header["aten::pow.Tensor_Scalar"] == "fp32"
