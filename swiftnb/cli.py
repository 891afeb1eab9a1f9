"""The ``swiftnb`` command, compatible with the ``swift`` command.

``swiftnb run [options] script.swift [-name=value ...]`` takes the options and gives the
return codes of the Swift User Guide (section 4.1): 0 success, 1 command-line error,
2 execution error, 3 compile error, 4 script file missing.  ``swiftnb script.swift`` and
``swiftnb -typecheck script.swift`` work too, as with ``swift``.  Other sub-commands:
``typecheck``, ``timings``, ``plot-log``, ``coaster-service`` (a persistent coaster
service, ``swiftnb.coasters.servicecmd``), ``history`` and ``explain`` (the run store,
``swiftnb.store.commands``).
"""

from __future__ import annotations

import errno
import gc
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from swiftnb import SWIFT_VERSION

if TYPE_CHECKING:  # the configuration package is imported only by the commands using it
    from typing import TextIO

    from swiftnb.config import Config
    from swiftnb.config.cli_options import CommandLine
    from swiftnb.engine.run import RunOutcome
    from swiftnb.lang.checked import CheckedProgram
    from swiftnb.runner import RunHandle

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_EXECUTION = 2
EXIT_COMPILE = 3
EXIT_MISSING_SCRIPT = 4
#: the script's name when its code comes on the command line (``-e``), as in Swift
SOURCE_NAME = "<string>"
#: what names the run directory's files of such a run (``swift-run001.log``); Swift's
#: were ``<string>-run001.log``
STRING_RUN_NAME = "swift"

USAGE = """\
usage: swiftnb run [options] script.swift [-name=value ...]
       swiftnb typecheck script.swift
       swiftnb timings run.log [--format aimes|csv|json|table]
       swiftnb plot-log run.log [-o report.html]
       swiftnb version
       swiftnb convert-config [-sites.file F] [-tc.file F] [-config F.properties] [-out F]
       swiftnb check-config [-config swift.conf] [-sites a,b] [-PROPERTY VALUE ...]
                            [-listconfig files|full] [-sitelist]
       swiftnb coaster-service [-p PORT] [-localport PORT] [-passive | -jobmanager JM]
       swiftnb history [-store DIR] [-format table|json]
       swiftnb explain FILE [-why] [-store DIR]
       swiftnb monitor RUN.log [-port PORT] [-address ADDR]
       swiftnb calibrate LOG... -o model.json
       swiftnb whatif -model model.json [-config swift.conf] script.swift [args]
                      [-runs R] [-format table|json]

Run 'swiftnb run -help' for the options of a run."""


def _usage_error(message: str) -> int:
    print(f"swiftnb: {message}", file=sys.stderr)
    print(USAGE, file=sys.stderr)
    return EXIT_USAGE


def typecheck_file(path: str | None, *, source: str | None = None, out=None, err=None) -> int:
    """Parse and check one script (the file at ``path``, or the code ``source`` given
    with ``-e``); print the summary or the diagnostics; exit code."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err

    import os

    from swiftnb import lang

    try:
        if source is not None:
            program = lang.compile_source(source, SOURCE_NAME, os.getcwd())
        else:
            assert path is not None
            missing = script_problem(path)
            if missing:
                print(missing, file=err)
                return EXIT_MISSING_SCRIPT
            from swiftnb import scriptcache

            program = lang.load(path, parse_file=scriptcache.parse)
    except lang.CompileError as exc:
        print(exc.render(), file=err)
        return EXIT_COMPILE
    for warning in program.warnings:
        print(f"Warning: {warning}", file=err)
    print(program.summary(), file=out)
    return EXIT_OK


def script_problem(path: str) -> str | None:
    """Why ``path`` cannot be run as a script (exit code 4), or None.  A directory gets
    its own message: "does not exist" would send the user looking for a missing file."""
    import os

    if os.path.isdir(path):
        return (f"SwiftScript program is a directory, not a file: {path} "
                f"(give the .swift file in it)")
    if not os.path.isfile(path):
        return f"SwiftScript program does not exist: {path}"
    return None


def _cmd_typecheck(argv: Sequence[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        return _usage_error("typecheck takes exactly one script file")
    return typecheck_file(argv[0])


# ---------------------------------------------------------------------------- swiftnb run
# The `swift` command of Guide 4.1: options before the script, `-name=value` script
# arguments after it, Swift's return codes, header lines and ticker on stderr and only
# the script's own output on stdout.

RUN_USAGE = """\
usage: swiftnb run [options] script.swift [-name=value ...]

options:
  -help, -h              this text
  -version               print the version and exit
  -typecheck             check the script and exit (no execution)
  -dryrun                run the script without submitting any app
  -resume FILE           resume from a restart log (.rlog), skipping completed calls
  -config FILE           the swift.conf to use
  -configpath A:B        these swift.conf files instead of the default search
  -sites.file FILE       a legacy sites.xml
  -tc.file FILE          a legacy tc.data
  -properties FILE       a legacy (0.95) swift.properties (as -config FILE.properties)
  -sites A,B             the sites to run on (overrides `sites` of the configuration)
  -runid ID              the run id (default runNNN; also the run directory)
  -logfile FILE          where the Swift-format log goes (default RUNDIR/SCRIPT-RUNID.log)
  -verbose, -v           more detail on the console
  -debug, -d             much more detail on the console (every log line)
  -pgraph FILE|true      write a Graphviz file of the run's dataflow
  -ui none               no progress ticker
  -tui, -ui text         a full-screen terminal monitor of the run (q leaves it)
  -ui http[:PORT], -monitor  the run's panels in a browser (127.0.0.1, a token URL)
  -listconfig [files|full]  print the configuration files (or the merged tree), exit
  -sitelist              print the defined sites and exit
  -cdm.file FILE         the CDM policy file (also -cdmfile, -CDMFile)
  -recompile             parse the script again even if it is unchanged
  -e CODE                run the SwiftScript code CODE instead of a script file
  -compileOnly, -c       compile the script (again) and exit without running it
  -PROPERTY VALUE        a Swift property, e.g. -lazy.errors true, -execution.retries 2,
                         -sitedir.keep true, -foreach.max.threads 100,
                         -clustering.enabled true, or any global swift.conf key such as
                         -executionRetries 2 (a boolean alone means true)

script arguments (after the script) are read with arg("name"): -name=value

return codes: 0 success, 1 command-line or configuration error, 2 execution error,
3 compile error, 4 script file does not exist"""


def parse_run_args(argv: Sequence[str]) -> CommandLine:
    """The command line of a run (the kernel's ``%%swift`` line too), read by the one
    parser of every sub-command (:func:`swiftnb.config.cli_options.parse_command_line`);
    raises its ``CommandLineError`` (a usage error)."""
    from swiftnb.config.cli_options import parse_command_line

    return parse_command_line(argv)


def _version_line() -> str:
    from swiftnb import __version__

    return f"Swift {SWIFT_VERSION} swiftnb {__version__}"


#: errors of a stream whose reader has gone (`| head`, a closed terminal): not failures
_GONE_READER = frozenset({errno.EPIPE, errno.EIO, errno.ECONNRESET})


class _Tee:
    """A text stream that also copies everything into the run's ``swift.out``."""

    def __init__(self, stream, copy, on_copy_lost: Callable[[str], None]) -> None:
        self._stream = stream
        self._copy = copy
        #: the error that lost the script's output (a full disk): the run says it, exit 2
        self.failure: OSError | None = None
        #: why swift.out is incomplete (a full disk), said once through ``on_copy_lost``
        #: (the run's records_lost: a warning, and exit code 2)
        self.copy_lost: str | None = None
        self._on_copy_lost = on_copy_lost

    def write(self, text: str) -> int:
        try:
            self._copy.write(text)
        except OSError as exc:
            self.copy_failed(exc)
        except ValueError:  # closed: the run is over
            pass
        try:
            return self._stream.write(text)
        except UnicodeEncodeError:  # a console that takes UTF-8 only: other bytes as \xff
            return self._stream.write(
                text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))
        except OSError as exc:  # `swiftnb run x.swift | head` (EPIPE), a terminal hung up (EIO):
            self._failed(exc)  # the run goes on, swift.out still gets everything
            return len(text)

    def _failed(self, exc: OSError) -> None:
        """A reader that went away is not an error; a stream that cannot take the output
        (ENOSPC: `>/dev/full`, a full disk) is, said at the end of the run."""
        if exc.errno not in _GONE_READER and self.failure is None:
            self.failure = exc

    def copy_failed(self, exc: OSError) -> None:
        """swift.out could not take the output: said once, the run fails at its end."""
        if self.copy_lost is None:
            self.copy_lost = (f"the run's console copy {self._copy.name} could not be "
                              f"written ({exc.strerror or exc}); it is incomplete")
            self._on_copy_lost(self.copy_lost)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            self._failed(exc)
        try:
            self._copy.flush()
        except OSError as exc:
            self.copy_failed(exc)
        except ValueError:
            pass

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class _Current:
    """Writes to whatever ``sys.stdout``/``sys.stderr`` is at the time (the tee that
    copies into ``swift.out`` is installed once the run directory exists)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def write(self, text: str) -> int:
        return getattr(sys, self._name).write(text)

    def flush(self) -> None:
        getattr(sys, self._name).flush()

    def __getattr__(self, name: str):
        return getattr(getattr(sys, self._name), name)


def _cmd_run(argv: Sequence[str]) -> int:
    import os

    from swiftnb.config.cli_options import CommandLineError, check_files

    try:
        opts = parse_run_args(argv)
    except CommandLineError as exc:
        return _run_usage_error(exc)
    if opts.flag("-help", "-h"):
        print(RUN_USAGE)
        return EXIT_OK
    if opts.flag("-version"):
        print(_version_line())
        return EXIT_OK
    if opts.flag("-listconfig", "-sitelist"):  # no script needed (as in Swift)
        return _list_config(opts)
    source = opts.values.get("-e")  # the script's code itself (Swift's -e)
    if source is not None and opts.script is not None:
        print("Could not start execution:\n\t-e and <file> are mutually exclusive",
              file=sys.stderr)
        return EXIT_USAGE
    if opts.script is None and source is None:
        print("swiftnb: no SwiftScript program specified", file=sys.stderr)
        print(RUN_USAGE, file=sys.stderr)
        return EXIT_USAGE
    if opts.flag("-typecheck"):
        return typecheck_file(opts.script, source=source)
    if opts.script is not None:
        missing = script_problem(opts.script)
        if missing:
            print(missing, file=sys.stderr)
            return EXIT_MISSING_SCRIPT
    base_dir = os.getcwd()
    try:
        check_files(opts, base_dir)  # before compiling: a usage error, exit 1
    except CommandLineError as exc:
        print(f"swiftnb: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from swiftnb import lang

    compile_only = opts.flag("-compileOnly", "-c")  # Swift/K trunk's: compile, do not run
    if compile_only:
        print(_version_line())
    try:
        if source is not None:
            program = lang.compile_source(source, SOURCE_NAME, base_dir)
        else:
            from swiftnb import scriptcache

            assert opts.script is not None  # no source: the script names a file
            program = lang.load(opts.script, parse_file=scriptcache.reparse
                                if opts.flag("-recompile") or compile_only
                                else scriptcache.parse)
    except lang.CompileError as exc:
        if not _parses(opts.script, source):
            print(f"Could not compile SwiftScript source: {exc.render()}", file=sys.stderr)
            return EXIT_COMPILE
        # Swift 0.96's Loader said a script that parses but fails its checks "could not
        # start", and exited 1; the Guide's table (4.1.2), which swiftnb follows, makes
        # every compile error 3, and scripts that must be rejected are checked for 3
        causes = exc.render().replace("\n", "\n\t")
        print(f"Could not start execution:\n\t{causes}", file=sys.stderr)
        return EXIT_COMPILE
    if compile_only:
        for warning in program.warnings:
            print(f"Warning: {warning}", file=sys.stderr)
        return EXIT_OK
    config = _run_config(opts, base_dir)
    if config is None:
        return EXIT_USAGE
    return _execute(opts, program, config, base_dir)


def _run_usage_error(exc: Exception) -> int:
    print(f"swiftnb: {exc}", file=sys.stderr)
    print(RUN_USAGE, file=sys.stderr)
    return EXIT_USAGE


def _run_config(opts: CommandLine, base_dir: str) -> Config | None:
    """The run's configuration from the command line, or None (the error is printed).
    Loaded as ``check-config`` loads it (one parser, one loader), so the two agree."""
    from swiftnb.config import ConfigError
    from swiftnb.config.cli_options import load_from_args

    try:
        return load_from_args(opts, cwd=base_dir)
    except ConfigError as exc:
        print(f"Could not start execution:\n\t{exc}", file=sys.stderr)
        return None


def _parses(path: str | None, source: str | None = None) -> bool:
    """Whether the script (the file at ``path``, or ``source``) is free of syntax errors,
    its checks aside."""
    from swiftnb import lang

    try:
        if source is not None:
            lang.parse(source, SOURCE_NAME)
        else:
            assert path is not None
            lang.parse(lang.read_script(path), path)
    except lang.CompileError:
        return False
    except OSError:
        return True
    return True


def _list_config(opts: CommandLine) -> int:
    """``-listconfig [files|full]`` and ``-sitelist``: print, do not run."""
    import os

    config = _run_config(opts, os.getcwd())
    if config is None:
        return EXIT_USAGE
    if opts.listconfig:
        print(config.listconfig(full=opts.listconfig == "full"), end="")
    if opts.sitelist:  # 0.96's printSiteList
        print("Available sites: ")
        for name in config.sites:
            print(f"\t{name}")
    return EXIT_OK


def _execute(opts: CommandLine, program: CheckedProgram, config: Config, base_dir: str) -> int:
    """Prepare the run (swiftnb.runner), tee the console into ``swift.out``, run it."""

    from swiftnb.runner import RunSetupError, prepare_run

    from swiftnb.config.cli_options import file_problem
    from swiftnb.monitor.options import web_monitor_port
    from swiftnb.monitor.tuioptions import NOT_A_TERMINAL, not_a_terminal, wants_terminal_monitor

    resume = opts.values.get("-resume")
    if resume is not None and (problem := file_problem(resume)):
        print(f"swiftnb: -resume {resume}: {problem.replace('file', 'restart log')}",
              file=sys.stderr)
        return EXIT_USAGE
    logfile = opts.values.get("-logfile")
    problem = _run_files_problem(opts, base_dir, program)
    if problem is None and logfile is not None:
        problem = _logfile_problem(logfile, base_dir)
    if problem:  # before the run directory exists: no empty runNNN is left behind
        print(f"Could not start execution:\n\t{problem}", file=sys.stderr)
        return EXIT_USAGE
    warnings = []
    if resume is not None:
        warning = _resume_name_warning(resume, opts.script or STRING_RUN_NAME)
        if warning:
            warnings.append(warning)
    ui = opts.values.get("-ui")
    try:  # -ui http[:PORT] and -monitor: the web monitor (docs/monitors.md)
        web_port = web_monitor_port(ui, opts.flags)
    except ValueError as exc:
        return _run_usage_error(exc)
    monitor: str | None = None
    if ui not in (None, "none", "summary", "text") and web_port is None:  # Swift's TUI[:port]
        monitor = f"-ui {ui}"
    if wants_terminal_monitor(ui, opts.flags) and not_a_terminal(sys.__stdout__):
        warnings.append(NOT_A_TERMINAL.format(  # -tui, -ui text: docs/monitors.md
            option="-tui" if "-tui" in opts.flags else "-ui text"))
    if monitor is not None:
        warnings.append(f"{monitor}: swiftnb has no such monitor; the run shows the summary "
                        "ticker, and its live monitors are the notebook panels "
                        "(docs/widgets.md)")
    pgraph = opts.values.get("-pgraph")
    if pgraph in ("false", None):
        pgraph = None
    try:
        handle = prepare_run(
            program, config=config, runid=opts.values.get("-runid"), args=opts.script_args,
            base_dir=base_dir, logfile=opts.values.get("-logfile"),
            ticker=opts.values.get("-ui") != "none", ticker_stream=_Current("stderr"),
            stdout=_Current("stdout"), dryrun=opts.flag("-dryrun"), resume=resume,
            script_name=opts.script, log_arguments=list(opts.argv), pgraph=pgraph,
            verbose=opts.flag("-verbose", "-v"),
            minimal_logging=opts.flag("-minimalLogging", "-minimal.logging"),
            reduced_logging=opts.flag("-reducedLogging", "-reduced.logging"),
            compact_logging=opts.flag("-compactLogging", "-compact.logging"),
            keep_events=False)  # the log has them; in memory they grow with the run
    except RunSetupError as exc:
        print(f"Could not start execution:\n\t{exc}", file=sys.stderr)
        return EXIT_USAGE
    # a file name that is not UTF-8 is copied as its bytes (a strict copy dropped the line)
    out_copy = open(handle.run_dir.out_file, "a", encoding="utf-8", errors="surrogateescape")
    real_out, real_err = sys.stdout, sys.stderr
    tee_out = _Tee(real_out, out_copy, handle.run.records_lost)
    tee_err = _Tee(real_err, out_copy, handle.run.records_lost)
    sys.stdout, sys.stderr = tee_out, tee_err
    try:
        code = _execute_in(opts, program, config, handle, warnings)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = real_out, real_err
        try:
            out_copy.close()
        except OSError as exc:  # its last buffer could not be written
            tee_out.copy_failed(exc)
    if tee_out.failure is not None:
        return _lost_output(tee_out.failure, handle.run_dir.out_file)
    lost = tee_out.copy_lost or tee_err.copy_lost
    if lost is not None and code == 0:  # lost after the run's end had been decided
        print(f"Execution failed:\n\t{lost}", file=sys.stderr)
        return EXIT_EXECUTION
    return code


def _lost_output(exc: OSError, copy: str) -> int:
    """The script's output could not be written to stdout: an execution error (exit 2),
    said on stderr, never a silent success."""
    print(f"Execution failed:\n\tcannot write the script's output to stdout "
          f"({_stream_name(1)}): {exc.strerror or exc}; swift.out has it: {copy}",
          file=sys.stderr)
    return EXIT_EXECUTION


def _stream_name(fd: int) -> str:
    """What a standard descriptor is open on (``/dev/full``), for the message."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return f"descriptor {fd}"


def _run_files_problem(opts: CommandLine, base_dir: str,
                       program: CheckedProgram) -> str | None:
    """Why a file the run writes (``-logfile``, ``-pgraph``) would overwrite a file the
    user gave it, or why ``-pgraph`` cannot be written (see swiftnb.runfiles)."""
    from swiftnb.runfiles import written_files_problem

    read = [("the script", opts.script)] + [
        (option, opts.values.get(option))
        for option in ("-config", "-properties", "-sites.file", "-tc.file", "-resume")]
    return written_files_problem(
        [(option, opts.values.get(option)) for option in ("-logfile", "-pgraph")],
        read, base_dir, program)


def _logfile_problem(logfile: str, base_dir: str) -> str | None:
    """Why the log cannot be written at ``-logfile`` (naming the log file), or None.
    Tried the way the run will use it: missing directories made, the file opened for
    appending."""
    import os

    path = os.path.abspath(os.path.join(base_dir, logfile))
    try:
        if os.path.isdir(path):
            raise IsADirectoryError(21, "Is a directory")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        shown = logfile if os.path.abspath(logfile) == path else f"{logfile} ({path})"
        why = exc.strerror or str(exc)
        if isinstance(exc, (FileExistsError, NotADirectoryError)):
            blocker = os.path.dirname(path)  # a file where a directory of the path must be
            while blocker and not os.path.lexists(blocker) and blocker != os.path.dirname(blocker):
                blocker = os.path.dirname(blocker)
            if os.path.lexists(blocker) and not os.path.isdir(blocker):
                why = f"{blocker} is a file, not a directory"
        return f"-logfile {shown}: cannot write the log file: {why}"
    return None


def _resume_name_warning(resume: str, script: str) -> str | None:
    """A warning when a restart log's name says it is another script's: Swift named it
    ``SCRIPT-RUNID.N.rlog``, and resuming with another script's log skips nothing (or,
    worse, calls that happen to look alike)."""
    import os

    from swiftnb.rundir import script_stem

    stem = script_stem(script)
    name = os.path.basename(resume)
    if name.startswith(stem + "-"):
        return None
    return (f"the restart log {resume} does not look like one of {os.path.basename(script)} "
            f"(its name does not start with \"{stem}-\"); resuming with it anyway")


def _execute_in(opts: CommandLine, program: CheckedProgram, config: Config, handle: RunHandle,
                warnings: Sequence[str] = ()) -> int:
    import asyncio
    import os

    from swiftnb.monitor.options import MonitorListenError, web_monitor_port
    from swiftnb.monitor.tuioptions import wants_terminal_monitor

    err = sys.stderr
    web_port = web_monitor_port(opts.values.get("-ui"), opts.flags)  # checked by _execute
    print(_version_line(), file=err)
    print(f"RunID: {handle.runid}", file=err)
    for warning in [*program.warnings, *config.warnings]:
        print(f"Warning: {warning}", file=err)
    for warning in warnings:
        print(f"Warning: {warning}", file=err)
        try:
            handle.bus.emit("WARNING", {}, text=warning)
        except Exception:  # noqa: BLE001  the log line is a courtesy
            pass
    err.flush()
    # a command-line run cleans its top-level temporaries at the end, as Swift did
    handle.run.gc_top_level = True
    if opts.flag("-debug", "-d"):
        handle.run.unit_events = True  # FOREACH_IT_START/SCOPE/...: only when read
        handle.bus.subscribe(lambda e: _echo_debug(e))
    elif opts.flag("-verbose", "-v"):
        handle.bus.subscribe(lambda e: _echo_debug(e, verbose=True))

    async def main() -> RunOutcome:
        loop = asyncio.get_running_loop()
        current = asyncio.current_task()
        assert current is not None  # main() runs as the loop's task
        # SIGTERM, SIGHUP (the terminal or ssh session went away), SIGQUIT, and SIGUSR1/
        # SIGUSR2 (Slurm's --signal and Grid Engine's -notify warn a batch job so before
        # killing it): stop like Ctrl-C, killing the apps (they run in their own sessions)
        for signum in _STOP_SIGNALS:
            try:
                loop.add_signal_handler(signum, current.cancel)
            except (NotImplementedError, RuntimeError, ValueError):
                pass
        if web_port is not None:  # on this loop, before the run's first event
            handle.serve(port=web_port)
        tui = None
        if wants_terminal_monitor(opts.values.get("-ui"), opts.flags):  # -tui, -ui text
            from swiftnb.monitor.tui import open_terminal_monitor

            tui = open_terminal_monitor(handle, loop)  # None: not a terminal (warned)
        handle.start(loop)
        task = handle._task
        assert task is not None  # start() made it
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()  # interrupted: the run's task stops its apps and blocks
            try:
                await task
            except BaseException:  # noqa: BLE001
                pass
            raise
        finally:
            if tui is not None:
                tui.close()  # the terminal back, the held console output written

    try:
        outcome = asyncio.run(main())
    except MonitorListenError as exc:  # -ui http:PORT asked for what cannot be had
        print(f"swiftnb: {exc}", file=err)
        _log_interrupted_end(handle)
        return EXIT_USAGE
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("Execution interrupted", file=err)
        _log_interrupted_end(handle)
        restart = handle.restart.path
        if os.path.isfile(restart):
            print(f"Restart log: {restart}", file=err)
        return EXIT_EXECUTION
    if outcome.ok:
        return EXIT_OK
    _print_failure(outcome, err, aborted=handle.run.aborted)
    print(f"Restart log: {handle.restart.path}", file=err)
    code = outcome.exit_code
    return code if code == 99 else EXIT_EXECUTION  # 99: the hang detector (reference 2.6)


#: the signals that stop a run as Ctrl-C does (those this platform has)
_STOP_SIGNALS = tuple(getattr(signal, name) for name in (
    "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2") if hasattr(signal, name))


def _log_interrupted_end(handle: RunHandle) -> None:
    """End an interrupted run's log with ``Swift finished with errors``, as every failed
    run's log ends (log tools look for that line to tell a finished run from a running
    one).  The run has closed its log writer by now, so the line is appended; nothing is
    written when the log already ends so."""
    import os
    import time

    path = handle.log_path
    if not path:
        return
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 4096))
            tail = fh.read().decode("utf-8", "replace")
        if "Swift finished with" in tail.rsplit("Execution interrupted", 1)[-1]:
            return
        from swiftnb.events import Event
        from swiftnb.logs.writer import format_event

        with open(path, "a", encoding="utf-8") as fh:
            fh.write(format_event(Event(time.time(), "RUN_FAILURE", {})))
    except OSError:
        pass


def _print_failure(outcome: RunOutcome, err: TextIO, aborted: bool = False) -> None:
    """Swift's end-of-run error report (reference 2.6), unless the engine printed it.

    With lazy errors, Swift's ``ProcessBulkErrors`` lists each distinct message once,
    with `` (N times)`` when it occurred more than once (N dependants of one failed call
    all say ``Swift: Application cat not executed due to errors in dependencies``).  An
    error that is not an app failure (a failed assert) ends a lazy run at once, and Swift
    then printed only that one: ``Execution failed:`` and its message.
    """
    if outcome.reported:
        return
    errors = outcome.errors
    if not errors:
        print("Execution failed:\nExecution completed with errors", file=err)
        return
    if aborted and outcome.lazy:
        print(f"Execution failed:\n{errors[-1]}", file=err)
        return
    if len(errors) == 1 and not outcome.lazy:
        print(f"Execution failed:\n{errors[0]}", file=err)
        return
    counts: dict[str, int] = {}
    for e in errors:
        key = str(e).strip()
        counts[key] = counts.get(key, 0) + 1
    print("The following errors have occurred:", file=err)
    for i, (e, n) in enumerate(counts.items(), 1):
        print(f"{i}. {e}" + (f" ({n} times)" if n > 1 else ""), file=err)
    print("\nExecution failed:\nExecution completed with errors", file=err)


#: what -verbose shows: each call's life and the run's messages (not every status line)
_VERBOSE_KINDS = frozenset({"JOB_START", "JOB_END", "APPLICATION_EXCEPTION", "JOB_RESTARTED",
                            "END_FAILURE", "MESSAGE", "WARNING", "RUN_START"})


def _echo_debug(event, verbose: bool = False) -> None:
    """-debug: every log line on stderr; -verbose: the lines of ``_VERBOSE_KINDS``."""
    if verbose and event.kind not in _VERBOSE_KINDS:
        return
    from swiftnb.logs.writer import format_event

    sys.stderr.write(format_event(event))



def _cmd_version(argv: Sequence[str]) -> int:
    from swiftnb import __version__

    print(f"swiftnb {__version__}")
    return EXIT_OK


def _cmd_logs(name: str) -> Callable[[Sequence[str]], int]:
    def command(argv: Sequence[str]) -> int:
        from swiftnb.logs.cli import main as logs_main  # pandas/bokeh only when asked

        return logs_main(name, argv)

    return command


def _lazy_command(module: str, function: str) -> Callable[[Sequence[str]], int]:
    """A subcommand whose module is imported only when it runs (the start of every other
    command stays cheap)."""
    def command(argv: Sequence[str]) -> int:
        import importlib

        main: Callable[[Sequence[str]], int] = getattr(importlib.import_module(module), function)
        return main(argv)

    return command


COMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "run": _cmd_run,
    "typecheck": _cmd_typecheck,
    "version": _cmd_version,
    "timings": _cmd_logs("timings"),
    "plot-log": _cmd_logs("plot-log"),
    "convert-config": _lazy_command("swiftnb.config.commands", "convert_config"),
    "check-config": lambda argv: _check_config(argv),
    "coaster-service": _lazy_command("swiftnb.coasters.servicecmd", "main"),
    "history": _lazy_command("swiftnb.store.commands", "history_main"),
    "explain": _lazy_command("swiftnb.store.commands", "explain_main"),
    "monitor": _lazy_command("swiftnb.monitor.logcmd", "monitor_main"),
    "calibrate": _lazy_command("swiftnb.forecast.cli", "calibrate_main"),
    "whatif": _lazy_command("swiftnb.forecast.cli", "whatif_main"),
}


def _check_config(argv: Sequence[str]) -> int:
    """``swiftnb check-config``: the configuration, and each site's provider's check."""
    from swiftnb.config.commands import check_config
    from swiftnb.scheduling.build import check_sites

    return check_config(argv, check_sites=check_sites)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "-help", "--help", "help"):
        print(USAGE)
        return EXIT_OK if args else EXIT_USAGE
    command = COMMANDS.get(args[0])
    if command is not None:
        return command(args[1:])
    if args[0].startswith("-") or args[0].endswith(".swift"):
        return _cmd_run(args)  # the `swift` spelling: options and script, no sub-command
    return _usage_error(f"unknown command {args[0]!r}")


def console() -> None:
    """The ``swiftnb`` command: :func:`main`, then the end of the process.

    What the run made is still alive when the process ends, and the interpreter's last
    collections would walk all of it (some 15 ms of a 0.16 s one-app run) only to free
    memory the exit frees anyway; frozen, they skip it."""
    _open_missing_std_streams()
    code = main()
    gc.freeze()
    sys.exit(_flush_stdout(code))


def _open_missing_std_streams() -> None:
    """``swiftnb run s.swift >&-``: a closed descriptor 0, 1 or 2 is opened on
    /dev/null before anything else opens a file (which would take its number, and get
    the script's output or an app's stdin), and Python's missing ``sys.stdout`` (None)
    is made again, so the run works instead of dying at its first print."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if null != fd:  # the lower numbers are open: it landed elsewhere
                os.dup2(null, fd)
                os.close(null)
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, encoding="utf-8", errors="backslashreplace",
                                    closefd=False, buffering=1))


def _flush_stdout(code: int) -> int:
    """The exit code once stdout is flushed: an output that could not be written is an
    error said on stderr (exit 2), not Python's exit 120 at its last flush."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        try:
            sys.stdout = open(os.devnull, "w")  # the interpreter's own flush at exit
            print(f"swiftnb: cannot write to stdout ({_stream_name(1)}): "
                  f"{exc.strerror or exc}", file=sys.stderr)
        except OSError:
            pass
        return code or EXIT_EXECUTION
    return code


if __name__ == "__main__":
    console()
