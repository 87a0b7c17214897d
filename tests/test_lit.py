"""The graph-case runner itself: a wrong CHECK must fail."""
import pytest

from lit import LitFailure, parse_run_lines, run_case

CASE = '''\
# RUN: jitamp dump %s:fn | filecheck %s
import torch


def fn(x):
    with torch.autocast("cpu"):
        y = torch.mm(x, x)
    return y

# CHECK-LABEL: graph(
# CHECK: {check}
'''


def _write(tmp_path, check):
    path = tmp_path / "case.py"
    path.write_text(CASE.format(check=check))
    return str(path)


def test_a_right_check_passes(tmp_path):
    assert run_case(_write(tmp_path, "jitamp::autocast_to_fp16")) == 1


def test_a_wrong_check_fails(tmp_path):
    with pytest.raises(LitFailure, match="filecheck"):
        run_case(_write(tmp_path, "aten::this_op_is_not_there"))


def test_a_failing_dump_fails(tmp_path):
    path = tmp_path / "case.py"
    path.write_text("# RUN: jitamp dump %s:missing | filecheck %s\n# CHECK: graph\n")
    with pytest.raises(LitFailure, match="no 'missing'"):
        run_case(str(path))


def test_a_case_without_run_line_fails(tmp_path):
    path = tmp_path / "case.py"
    path.write_text("# CHECK: graph\n")
    with pytest.raises(LitFailure, match="no `# RUN:` line"):
        parse_run_lines(str(path))
