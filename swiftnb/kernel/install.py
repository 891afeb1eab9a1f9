"""The kernelspec of the Swift kernel and its installer.

``python -m swiftnb.kernel install [--user|--sys-prefix|--prefix P] [--name N]`` writes
``kernel.json`` (this Python, ``-m swiftnb.kernel -f {connection_file}``) through
jupyter_client's KernelSpecManager, so Jupyter finds it where it looks for kernels, and
copies the ``swiftnb-highlight`` lab extension (``%%swift`` cells highlighted as Swift in
JupyterLab 4 and Notebook 7: ``labextension/``) into the same Jupyter directory's
``labextensions``, where JupyterLab looks for prebuilt extensions.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

__all__ = ["KERNEL_NAME", "LAB_EXTENSION", "kernel_json", "install", "install_labextension",
           "main"]

KERNEL_NAME = "swiftnb"
DISPLAY_NAME = "Swift (swiftnb)"
#: the lab extension's name (its package.json) and where its files are in the package
LAB_EXTENSION = "swiftnb-highlight"
LAB_EXTENSION_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "labextension")


def kernel_json(python: str | None = None) -> dict:
    return {
        "argv": [python or sys.executable, "-m", "swiftnb.kernel", "-f", "{connection_file}"],
        "display_name": DISPLAY_NAME,
        "language": "swift",
        "interrupt_mode": "signal",
        "metadata": {"debugger": False},
    }


def install(*, user: bool = False, prefix: str | None = None, name: str = KERNEL_NAME,
            display_name: str | None = None) -> str:
    """Install the kernelspec; returns the directory it went to."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = kernel_json()
    if display_name:
        spec["display_name"] = display_name
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        with open(os.path.join(tmp, "kernel.json"), "w", encoding="utf-8") as fh:
            json.dump(spec, fh, indent=1)
        return KernelSpecManager().install_kernel_spec(tmp, name, user=user, prefix=prefix)


def install_labextension(*, user: bool = False, prefix: str | None = None) -> str:
    """Copy the lab extension into ``labextensions`` of the Jupyter data directory the
    kernelspec goes to (the user's, ``PREFIX/share/jupyter``, or the system's), replacing
    an older copy; returns where it went."""
    from jupyter_core.paths import SYSTEM_JUPYTER_PATH, jupyter_data_dir

    if prefix is not None:
        data = os.path.join(prefix, "share", "jupyter")
    elif user:
        data = jupyter_data_dir()
    else:
        data = SYSTEM_JUPYTER_PATH[0]
    target = os.path.join(data, "labextensions", LAB_EXTENSION)
    if os.path.islink(target) or os.path.isfile(target):
        os.remove(target)
    elif os.path.isdir(target):
        shutil.rmtree(target)
    shutil.copytree(LAB_EXTENSION_SOURCE, target,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m swiftnb.kernel install",
                                     description="Install the Swift (swiftnb) kernelspec.")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--user", action="store_true", help="into the user's Jupyter dir")
    target.add_argument("--sys-prefix", action="store_true",
                       help="into sys.prefix (the current virtualenv or conda env)")
    target.add_argument("--prefix", help="into PREFIX/share/jupyter/kernels")
    parser.add_argument("--name", default=KERNEL_NAME)
    parser.add_argument("--display-name", default=None)
    args = parser.parse_args(argv)
    prefix = sys.prefix if args.sys_prefix else args.prefix
    user = args.user or (prefix is None and not _writable_system())
    try:
        path = install(user=user, prefix=prefix, name=args.name,
                       display_name=args.display_name)
    except OSError as exc:
        print(f"swiftnb: cannot install the kernelspec: {exc}", file=sys.stderr)
        return 1
    print(f"Installed kernelspec {args.name} in {path}")
    try:
        where = install_labextension(user=user, prefix=prefix)
    except OSError as exc:
        print(f"swiftnb: cannot install the lab extension {LAB_EXTENSION}: {exc}",
              file=sys.stderr)
        return 1
    print(f"Installed lab extension {LAB_EXTENSION} in {where}")
    return 0


def _writable_system() -> bool:
    from jupyter_core.paths import SYSTEM_JUPYTER_PATH

    return any(os.access(p if os.path.exists(p) else os.path.dirname(p), os.W_OK)
               for p in SYSTEM_JUPYTER_PATH[:1])
