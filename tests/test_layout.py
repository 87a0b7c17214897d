"""The C++ rooms include in one direction only, the order docs/overview.md
states (ir < ops < passes < pipeline < library.cpp)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc" / "jit_autocast"
INCLUDE = re.compile(r'^#include "([a-z_]+)/', re.M)


def room_order():
    text = (ROOT / "docs" / "overview.md").read_text()
    match = re.search(r"\(((?:[a-z_]+ < )+)`library\.cpp`", text)
    assert match, "docs/overview.md states no room order"
    return [name.strip() for name in match.group(1).split("<") if name.strip()]


def test_every_room_is_in_the_stated_order():
    rooms = {path.name for path in CSRC.iterdir() if path.is_dir()}
    assert sorted(room_order()) == sorted(rooms)


def test_no_room_includes_a_room_above_it():
    order = room_order()
    upward = []
    for room in order:
        for path in sorted((CSRC / room).iterdir()):
            for included in INCLUDE.findall(path.read_text()):
                if included in order and order.index(included) > order.index(room):
                    upward.append(f"{path.relative_to(ROOT)} includes {included}/")
    assert upward == []


def test_the_check_sees_an_upward_include(tmp_path):
    text = '#include "passes/x.h"\n#include "ir/y.h"\n'
    assert INCLUDE.findall(text) == ["passes", "ir"]
