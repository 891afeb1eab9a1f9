"""BokehJS in the notebook page, from the installed bokeh package, never from a CDN.

Every bokeh view in a notebook page needs BokehJS in that page: ``jupyter_bokeh``'s
``BokehView`` (the dashboard's charts) calls ``window.Bokeh.require`` when it is
created, and ``bokeh.io.show`` output waits a second for ``window.Bokeh``.  Neither
loads it: ``bokeh.io.output_notebook()`` does, and by default it adds ``<script>`` tags
for cdn.bokeh.org, which a login node without internet never reaches ("Javascript
Error: timeout", "Failed to create view for 'BokehView'").

Here the library travels inside the output (bokeh's ``inline`` resources, read from the
installed ``bokeh/server/static``), in the ``application/vnd.bokehjs_load.v0+json``
bundle that jupyter_bokeh's lab extension runs in JupyterLab and Notebook 7 (the
``application/javascript`` copy in the same bundle is for the classic notebook).  Only
the parts our plots use are sent: the core and the widgets bundle (``Div``), about
1.6 MB, instead of the 3.9 MB of all of bokeh's components.
"""

from __future__ import annotations

from bokeh.resources import Resources

__all__ = ["RESOURCES", "output_notebook", "load_once"]

#: bokeh's own files, inlined; see the module docstring for the components
RESOURCES = Resources(mode="inline", components=["bokeh", "bokeh-widgets"])

_loaded_in_this_kernel = False


def output_notebook() -> None:
    """``bokeh.io.output_notebook`` with BokehJS from the installed package, no banner:
    what a notebook cell calls before ``bokeh.io.show``."""
    global _loaded_in_this_kernel
    from bokeh.io import output_notebook as bokeh_output_notebook

    bokeh_output_notebook(resources=RESOURCES, hide_banner=True)
    _loaded_in_this_kernel = True


def load_once() -> None:
    """Put BokehJS in the page under the current cell, once per kernel, and only in a
    Jupyter kernel (a terminal IPython or a plain script has no page to load it into).

    The dashboard calls this when it builds its first chart, in the cell that shows it, so
    the library runs before the chart's view is created.  Once per kernel: the page keeps
    ``window.Bokeh``; after a page reload the stored output of that cell loads it again.
    """
    global _loaded_in_this_kernel
    if _loaded_in_this_kernel or not _in_kernel():
        return
    from bokeh.io.notebook import load_notebook

    load_notebook(resources=RESOURCES, hide_banner=True)
    _loaded_in_this_kernel = True


def _in_kernel() -> bool:
    from IPython import get_ipython
    from ipykernel.zmqshell import ZMQInteractiveShell

    return isinstance(get_ipython(), ZMQInteractiveShell)
