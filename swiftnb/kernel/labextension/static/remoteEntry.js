/*
 * swiftnb-highlight: %%swift cells of a Python notebook are highlighted as Swift.
 *
 * JupyterLab 4 and Notebook 7 give every code cell the notebook's language (the
 * kernel's) and have no per-magic modes (jupyterlab/jupyterlab#15324).  This plugin sets
 * a code cell's MIME type to JupyterLab's own Swift language (text/x-swift) while the
 * cell starts with %%swift, and back to the notebook's otherwise; JupyterLab sets it
 * again on a new kernel or cell, so it is put back after every change.
 *
 * Written by hand as a module-federation container, the form JupyterLab loads prebuilt
 * extensions in (window._JUPYTERLAB[name] with init and get): it imports nothing, so it
 * needs no build and no shared packages; it reaches notebooks through the shell
 * (app.shell.widgets("main")), not through tokens.
 */
(function () {
  "use strict";

  var NAME = "swiftnb-highlight";
  var MAGIC = /^\s*%%swift\b/;
  var SWIFT = "text/x-swift";
  var seenNotebooks = new WeakSet();
  var seenCells = new WeakSet();
  var settling = false;  // while settle() sets a type again: no new round of checks

  function isNotebook(widget) {
    var content = widget && widget.content;
    return !!content && Array.isArray(content.widgets) && "codeMimetype" in content &&
      !!content.modelContentChanged;
  }

  function wanted(notebook, model) {
    return MAGIC.test(model.sharedModel.getSource()) ? SWIFT : notebook.codeMimetype;
  }

  function retarget(notebook, cell) {
    var model = cell.model;
    var want = wanted(notebook, model);
    if (model.mimeType !== want) {
      model.mimeType = want;
      if (!settling) {
        settle(notebook, cell, 0);
      }
    }
  }

  /* An editor loads the language of each MIME type change and applies whichever load
   * ends last, not the latest change: the notebook's reset (Python, a big grammar) can
   * land after our Swift.  Once both are loaded, set the type again if the editor shows
   * the other language (data-language on .cm-content, CodeMirror 6). */
  function settle(notebook, cell, round) {
    setTimeout(function () {
      var model = cell.model;
      var content = cell.node && cell.node.querySelector(".cm-content");
      if (!model || !content || cell.isDisposed) {
        return;
      }
      var swift = model.mimeType === SWIFT;
      if (swift !== (content.getAttribute("data-language") === "swift")) {
        var want = model.mimeType;
        settling = true;
        try {
          model.mimeType = swift ? notebook.codeMimetype : "text/plain";
          model.mimeType = want;
        } finally {
          settling = false;
        }
      }
      if (round < 4) {
        settle(notebook, cell, round + 1);
      }
    }, 250 * Math.pow(2, round));
  }

  function retargetAll(notebook) {
    notebook.widgets.forEach(function (cell) {
      var model = cell.model;
      if (!model || model.type !== "code") {
        return;
      }
      if (!seenCells.has(model)) {
        seenCells.add(model);
        // the notebook resets every cell's type when the kernel's language arrives
        model.mimeTypeChanged.connect(function () { retarget(notebook, cell); });
      }
      retarget(notebook, cell);
    });
  }

  function watch(widget) {
    if (!isNotebook(widget) || seenNotebooks.has(widget)) {
      return;
    }
    seenNotebooks.add(widget);
    var notebook = widget.content;
    notebook.modelContentChanged.connect(function () { retargetAll(notebook); });
    notebook.modelChanged.connect(function () { retargetAll(notebook); });
    retargetAll(notebook);
  }

  function watchShell(app) {
    var shell = app.shell;
    function scan() {
      var widgets = shell.widgets("main");
      var next = widgets.next();
      // lumino 2 iterators are JavaScript iterators
      while (!next.done) {
        watch(next.value);
        next = widgets.next();
      }
    }
    ["layoutModified", "currentChanged"].forEach(function (signal) {
      if (shell[signal]) {
        shell[signal].connect(scan);
      }
    });
    app.restored.then(scan);
  }

  var plugin = {
    id: NAME + ":plugin",
    description: "Highlights %%swift cells as Swift.",
    autoStart: true,
    activate: watchShell
  };

  var modules = {
    "./extension": function () { return { __esModule: true, "default": [plugin] }; }
  };

  var root = typeof window !== "undefined" ? window : self;
  root._JUPYTERLAB = root._JUPYTERLAB || {};
  root._JUPYTERLAB[NAME] = {
    get: function (module) {
      if (!modules[module]) {
        return Promise.reject(new Error("Module " + module + " does not exist in " + NAME));
      }
      return Promise.resolve(modules[module]);
    },
    init: function () { return Promise.resolve(); }
  };
})();
