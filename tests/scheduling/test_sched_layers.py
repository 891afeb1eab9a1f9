"""scheduling imports only events, config and engine.task at import time (docs/design.md)."""

import subprocess
import sys


def test_scheduling_does_not_import_providers_or_ui():
    code = (
        "import sys, swiftnb.scheduling, swiftnb.scheduling.clustering;"
        "bad = [m for m in sys.modules if m.startswith(('swiftnb.execution', 'swiftnb.coasters',"
        " 'swiftnb.widgets', 'swiftnb.kernel', 'swiftnb.logs', 'IPython', 'pandas'))];"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
