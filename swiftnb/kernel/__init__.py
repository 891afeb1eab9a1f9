"""The Jupyter side of swiftnb: the Swift kernel (:mod:`swiftnb.kernel.kernel`), its
installer (``python -m swiftnb.kernel install``), the cell session that keeps
declarations and values across cells, editing help, the pygments lexer and the
``%%swift`` magic for IPython (:mod:`swiftnb.kernel.magic`)."""

__all__ = ["KERNEL_NAME"]

KERNEL_NAME = "swiftnb"
