"""The graph-case runner itself: a wrong CHECK must fail."""
import pytest

from lit import LitFailure, check_prefixes, parse_run_lines, positive_check_count, run_case

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


# Implicit check-not (IMPLICIT_CHECK_NOT in lit.py): a caller-region node may
# be in a dump only where a positive check names it.

CASTS_OUTSIDE_SCOPE = '''\
# RUN: jitamp dump %s:fn {inline}| filecheck %s
import torch


def helper(a):
    return torch.mm(a, a)


def fn(x):
    y = torch.mm(x, x)
    with torch.autocast("cpu"):
        z = {call}
    return y, z

# CHECK-LABEL: graph(
{checks}
'''


def _write_outside(tmp_path, checks, call="torch.mm(x, x)", inline=""):
    path = tmp_path / "outside.py"
    path.write_text(CASTS_OUTSIDE_SCOPE.format(checks=checks, call=call, inline=inline))
    return str(path)


def test_an_unchecked_caller_region_fails(tmp_path):
    # The CHECKs pass; the dump's caller-region node is named by none.
    path = _write_outside(tmp_path, "# CHECK: aten::mm")
    with pytest.raises(LitFailure, match="implicit check-not: the dump has 1 line.*checks name 0"):
        run_case(path)


def test_a_checked_caller_region_passes(tmp_path):
    path = _write_outside(tmp_path, "# CHECK: jitamp::autocast_caller_region()\n# CHECK: aten::mm")
    assert run_case(path) == 1


def test_a_caller_region_beyond_the_checked_ones_fails(tmp_path):
    # Inlined, the helper brings its own caller-region node: two in the dump,
    # one checked.
    path = _write_outside(tmp_path, "# CHECK: jitamp::autocast_caller_region()\n# CHECK: aten::mm",
                          call="helper(x)", inline="--inline ")
    with pytest.raises(LitFailure, match="the dump has 2 line.*checks name 1"):
        run_case(path)
    path = _write_outside(tmp_path, "# CHECK-COUNT-2: jitamp::autocast_caller_region()",
                          call="helper(x)", inline="--inline ")
    assert run_case(path) == 1


def test_a_negative_check_does_not_name_it(tmp_path):
    # A graph whose casts are all inside its scope passes with no word on
    # caller regions; a -NOT or prose line never counts as naming one.
    path = tmp_path / "case.py"
    path.write_text(CASE.format(check="jitamp::autocast_to_fp16")
                    + "# CHECK-NOT: jitamp::autocast_caller_region\n# a jitamp::autocast_caller_region in prose\n")
    assert run_case(str(path)) == 1
    assert positive_check_count(str(path), ["CHECK"], "jitamp::autocast_caller_region") == 0


def test_check_prefixes_of_a_run_line():
    assert check_prefixes([]) == ["CHECK"]
    assert check_prefixes(["%s", "--check-prefix", "INLINED"]) == ["INLINED"]
    assert check_prefixes(["--check-prefix=A", "--check-prefixes", "B,C"]) == ["A", "B", "C"]


def test_only_the_run_lines_prefixes_count(tmp_path):
    # The OTHER prefix's check names the node; this RUN's CHECK does not.
    path = _write_outside(tmp_path, "# CHECK: aten::mm\n# OTHER: jitamp::autocast_caller_region()")
    with pytest.raises(LitFailure, match="checks name 0"):
        run_case(path)
