"""Collects every tests/graphs/*.py and *.ir case as one pytest item (see tests/lit.py)."""
import pytest

from lit import LitFailure, run_case


def pytest_collect_file(parent, file_path):
    if file_path.suffix in (".py", ".ir") and file_path.name != "conftest.py":
        return GraphCase.from_parent(parent, path=file_path)
    return None


class GraphCase(pytest.File):
    def collect(self):
        yield GraphItem.from_parent(self, name=self.path.stem)


class GraphItem(pytest.Item):
    def runtest(self):
        run_case(str(self.path))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, LitFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"graph case {self.name}"
