"""``python -m swiftnb.kernel install [...]`` installs the kernelspec; otherwise (as Jupyter
starts it: ``-f CONNECTION_FILE``) it runs the kernel."""

import sys

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "install":
        from swiftnb.kernel.install import main

        sys.exit(main(sys.argv[2:]))
    from ipykernel.kernelapp import IPKernelApp

    from swiftnb.kernel.kernel import SwiftKernel

    IPKernelApp.launch_instance(kernel_class=SwiftKernel)
