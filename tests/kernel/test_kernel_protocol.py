"""The Swift kernel through jupyter_client with the installed kernelspec
(jupyter_kernel_test: execute, errors, complete, inspect, is_complete, history)."""

from __future__ import annotations

import shutil
import tempfile
import unittest

import jupyter_kernel_test
import pytest
from jupyter_client.manager import start_new_kernel

from kernelhelp import ensure_kernelspec

pytestmark = pytest.mark.timeout(120)


class SwiftKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "swiftnb"
    language_name = "swift"
    file_extension = ".swift"

    code_hello_world = 'trace("hello, world");'
    code_stderr = '%python import sys; print("to stderr", file=sys.stderr)'
    code_generate_error = "int x = ;"
    code_execute_result = [{"code": "%%python\n6*7", "result": "42"}]
    code_display_data = [{"code": '%%python\nfrom IPython.display import HTML, display\n'
                                  'display(HTML("<b>swift</b>"))', "mime": "text/html"}]
    code_history_pattern = "6*"
    # range and search read IPython's history database, which its saving thread fills late
    supported_history_operations = ("tail",)
    code_inspect_sample = "strcat"
    completion_samples = [
        {"text": "forea", "matches": {"foreach"}},
        {"text": "file f <single_file_m", "matches": {"single_file_mapper"}},
        {"text": "trace(str", "matches": {"strcat", "strcut", "strjoin", "strsplit", "string",
                                          "strstr"}},
    ]
    complete_code_samples = ["int x = 1;", 'trace("a");', "foreach i in [1:3] {\n trace(i);\n}",
                             "%python x = 1"]
    incomplete_code_samples = ["foreach i in [1:3] {", 'trace("abc', "int x = 1", "/* doc"]
    invalid_code_samples = ["}", "int x = ;"]

    @classmethod
    def setUpClass(cls) -> None:
        ensure_kernelspec()
        cls._cwd = tempfile.mkdtemp(prefix="swiftnb-kernel-")
        cls.km, cls.kc = start_new_kernel(kernel_name=cls.kernel_name, cwd=cls._cwd)
        # the dashboard's comm messages are not in jupyter_kernel_test's message schema
        reply = cls.kc.execute_interactive("%swift_config --no-dashboard", timeout=60)
        assert reply["content"]["status"] == "ok", reply["content"]

    @classmethod
    def tearDownClass(cls) -> None:
        super().tearDownClass()
        shutil.rmtree(cls._cwd, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
