"""Output, files, command line and process builtins: ``trace``, ``tracef``, ``printf``,
``fprintf``, ``assert``, ``arg``, ``args``, ``filename(s)``, ``dirname``, ``exists``,
``extractInt``/``extractFloat``, ``readData``/``readStructured``/``writeData``,
``length``, ``system``, ``getEnv``."""

from __future__ import annotations

import asyncio
import errno
import os
import re
from typing import Any

from swiftnb.engine import datafiles
from swiftnb.engine.builtins.registry import register
from swiftnb.engine.data import ArrayType as DataArrayType
from swiftnb.engine.data import StructType as DataStructType
from swiftnb.engine.data import (
    AssertionFailed,
    BuiltinContext,
    BuiltinError,
    FileValue,
    as_data_type,
    leaf_files,
    local_path,
)
from swiftnb.engine.formatting import java_str, swift_format, trace_line
from swiftnb.engine.textread import read_text_file


def _path_of(v: Any) -> str:
    if isinstance(v, FileValue):
        if v.path is None:
            raise BuiltinError(f"{v.name} is not mapped to a file")
        return v.path
    if isinstance(v, str):
        return v
    files = list(leaf_files(v))
    if len(files) == 1 and files[0].path is not None:
        return files[0].path
    raise BuiltinError(f"expected a file or a path, got {java_str(v)}")


def _local(ctx: BuiltinContext, path: str) -> str:
    return local_path(ctx.base_dir, path)


async def read_text(ctx: BuiltinContext, f: Any, what: str) -> str:
    """The whole text of a mapped file, for ``what`` (the builtin reading it): the one
    reader of readData, readStructured, extractInt, trunk's read and friends.  It never
    blocks the engine (a named pipe waits for its writer on the loop), reads bounded
    text only, and a file it cannot or will not read is that builtin's error, naming
    the file (:mod:`swiftnb.engine.textread`)."""
    path = _path_of(f)
    try:
        return await read_text_file(_local(ctx, path), path)
    except BuiltinError as e:
        raise BuiltinError(f"{what}: {e.message}") from None


def _arg_names(ctx: BuiltinContext, skip: int) -> list | None:
    names = ctx.arg_names
    return list(names[skip:]) if names else None


# ------------------------------------------------------------------ output

@register("trace", kind="procedure")
def trace(ctx: BuiltinContext, *args: Any) -> None:
    """trace(any...). Prints ``SwiftScript trace: `` + the values joined by ``", "``
    (arrays ``{k = v, ...}``, structs ``s:S - Closed``), on stdout and in the log."""
    line = trace_line(args)
    ctx.write_stdout(line + "\n")
    ctx.emit("TRACE", None, line)


@register("tracef", kind="procedure")
def tracef(ctx: BuiltinContext, fmt: str, *args: Any) -> None:
    """tracef(string fmt, any...). Swift format to stdout, no prefix, no added newline."""
    ctx.write_stdout(swift_format(fmt, args, _arg_names(ctx, 1)))


@register("printf", kind="procedure")
def printf(ctx: BuiltinContext, fmt: str, *args: Any) -> None:
    """printf(string fmt, any...). Same as tracef."""
    ctx.write_stdout(swift_format(fmt, args, _arg_names(ctx, 1)))


@register("fprintf", kind="procedure")
def fprintf(ctx: BuiltinContext, filename: Any, fmt: str, *args: Any) -> None:
    """fprintf(string file, string fmt, any...). Appends the formatted text to a local
    file (one write per call, so concurrent calls do not interleave)."""
    text = swift_format(fmt, args, _arg_names(ctx, 2))
    path = _local(ctx, _path_of(filename))
    try:
        # O_NONBLOCK: a named pipe nobody reads fails the open (ENXIO) instead of
        # blocking the event loop for ever (the run would not even answer SIGINT)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
                     | os.O_NOCTTY | os.O_CLOEXEC, 0o666)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise BuiltinError(f"fprintf: cannot write {path}: it is a named pipe that "
                               "nobody reads") from None
        raise BuiltinError(f"fprintf: cannot write {path}: {e.strerror}") from None
    try:
        os.set_blocking(fd, True)  # one whole write per call, as for a file
        os.write(fd, text.encode("utf-8"))
    except OSError as e:
        raise BuiltinError(f"fprintf: cannot write {path}: {e.strerror}") from None
    finally:
        os.close(fd)


@register("assert", kind="procedure")
def assert_(ctx: BuiltinContext, cond: Any, msg: str = "Assertion failed") -> None:
    """assert(boolean|int c[, string msg]). Fails the run when c is false or 0: prints
    ``swift: assert failed: MSG`` and the run ends with ``Execution failed:`` MSG."""
    ok = cond if isinstance(cond, bool) else cond != 0
    if not ok:
        ctx.write_stdout(f"swift: assert failed: {msg}\n")
        raise AssertionFailed(msg)


# ------------------------------------------------------------------ command line / env

@register("arg")
def arg(ctx: BuiltinContext, name: str, default: str | None = None) -> str:
    """arg(string name[, string default]) -> string. The ``-name=value`` script argument;
    missing without default: ``Missing command line argument: name``."""
    v = ctx.script_args.get(name)
    if v is None:
        if default is None:
            raise BuiltinError(f"Missing command line argument: {name}")
        return default
    return v


_ARG_TYPES = {"int", "string", "float", "boolean", "help"}


def _check_arg_type(kind: str, v: str | None) -> bool:
    from swiftnb.engine.builtins.numbers import parse_java_double, parse_java_int

    if v is None:
        return True
    try:
        if kind == "int":
            parse_java_int(v)
        elif kind == "float":
            parse_java_double(v)
        elif kind == "boolean":
            return v in ("true", "false")
    except BuiltinError:
        return False
    return True


_ALLOWED = {"int": "an integer", "float": "a number", "boolean": "either 'true' or 'false'"}


def _parse_args_spec(spec: str) -> dict[str, dict]:
    """Swift's ``FnArgs`` option grammar: ``opt, opt, ...`` where ``opt`` is ``key``
    ``sep`` ``<type[:default]>`` (sep one of space ``:`` ``=``) or ``[...]`` for an
    optional one; an optional bare ``[key]`` is a flag.  A spec without commas is split
    on whitespace instead (``"-min:<int> -bins:<int:10> [-normalize]"``)."""
    if "," in spec:
        parts = [p for p in re.split(r"\s*,\s*", spec.strip()) if p]
    else:
        parts = []
        for tok in spec.split():
            if parts and tok.startswith("<"):
                parts[-1] += " " + tok
            else:
                parts.append(tok)
    opts: dict[str, dict] = {}
    for s in parts:
        crt = s
        mandatory = True
        if s.startswith("["):
            if not s.endswith("]"):
                raise BuiltinError(f"Invalid option specification: '{s}'. Should end with ']'")
            mandatory = False
            crt = s[1:-1]
        m = re.search(r"[ :=]", crt)
        o: dict[str, Any] = {"mandatory": mandatory, "flag": False, "default": None,
                             "type": "boolean"}
        if m is None:
            if mandatory:
                raise BuiltinError(f"Missing required option type in '{s}'")
            o.update(name=crt, sep=" ", flag=True)
        else:
            o.update(name=crt[: m.start()], sep=m.group(0))
            typespec = crt[m.end():].strip()
            if not typespec:
                raise BuiltinError(f"Missing required option type in '{s}'")
            if not (typespec.startswith("<") and typespec.endswith(">")):
                raise BuiltinError(f"Invalid option type specification: '{typespec}'. Missing '<' and '>'")
            kind, colon, default = typespec[1:-1].partition(":")
            if kind.lower() not in _ARG_TYPES:
                raise BuiltinError(f"Invalid option type '{kind}' in '{s}'")
            o.update(type=kind.lower(), default=default if colon else None)
            if not _check_arg_type(o["type"], o["default"]):
                raise BuiltinError(f"Invalid default value for option '{o['name']}': '{o['default']}'")
        opts[o["name"]] = o
    return opts


@register("args")
def args(ctx: BuiltinContext, spec: str) -> dict[str, str]:
    """args(string spec) -> string[string]. Parses the script's command line by an
    option spec, as Swift's ``FnArgs``: ``"-min:<int>, -max:<int>, -bins:<int:10>,
    [-normalize]"`` (commas, or whitespace when there are none).  Each option is a key
    (with its dash, which is also the key of the result), a separator (``:``, ``=`` or a
    space: the command line must use the same one, ``-min:3`` / ``-min=3`` /
    ``-min 3``) and ``<type[:default]>``; ``[...]`` is optional; an optional bare key
    is a flag (``"true"`` when given).  Errors: ``Invalid option: '-x'``, ``Missing
    mandatory option '-min'``, ``Invalid value 'x' for option '-min'. Must be an
    integer``."""
    opts = _parse_args_spec(spec)
    argv = ctx.script_argv
    if argv is None:
        argv = [f"-{k}={v}" for k, v in ctx.script_args.items()]
    parsed: dict[str, str] = {}
    pending: dict | None = None

    def check_key(k: str, sep: str) -> dict:
        if k in parsed:
            raise BuiltinError(f"Duplicate option '{k}'")
        o = opts.get(k)
        if o is None:
            raise BuiltinError(f"Invalid option: '{k}'")
        if o["sep"] != sep:
            raise BuiltinError(f"Invalid separator ('{sep}' for '{k}'. Expected '{o['sep']}'")
        return o

    def check_value(o: dict, v: str) -> str:
        if not _check_arg_type(o["type"], v):
            raise BuiltinError(f"Invalid value '{v}' for option '{o['name']}'. Must be "
                               f"{_ALLOWED.get(o['type'], 'a string')}")
        return v

    for a in argv:
        if pending is None:
            m = re.search(r"[:=]", a)
            if m:
                o = check_key(a[: m.start()], m.group(0))
                parsed[o["name"]] = check_value(o, a[m.end():])
            else:
                o = check_key(a, " ")
                if o["flag"]:
                    parsed[o["name"]] = "true"
                else:
                    pending = o
        else:
            parsed[pending["name"]] = check_value(pending, a)
            pending = None
    if pending is not None:
        raise BuiltinError(f"Missing value for option '{pending['name']}'")
    for name, o in opts.items():
        if o["default"] is not None and name not in parsed:
            parsed[name] = o["default"]
    for name, o in opts.items():
        if o["mandatory"] and name not in parsed:
            raise BuiltinError(f"Missing mandatory option '{name}'")
    return parsed


@register("getEnv")
def get_env(ctx: BuiltinContext, name: str) -> str:
    """getEnv(string name) -> string. The environment variable, ``""`` if unset."""
    return os.environ.get(name, "")


# ------------------------------------------------------------------ files

@register("filename", waits="mapping")
def filename(ctx: BuiltinContext, v: Any) -> str:
    """filename(any) -> string. The mapped path; for composites all leaf paths separated
    by spaces.  Needs only the mapping, so it works on outputs not yet produced."""
    if isinstance(v, str):
        return v
    return " ".join(f.path or "" for f in leaf_files(v))


@register("filenames", waits="mapping")
def filenames(ctx: BuiltinContext, v: Any) -> dict[int, str]:
    """filenames(any) -> string[]. The leaf paths as an array."""
    if isinstance(v, str):
        return {0: v}
    return {i: f.path or "" for i, f in enumerate(leaf_files(v))}


@register("dirname", waits="mapping")
def dirname(ctx: BuiltinContext, v: Any) -> str:
    """dirname(any) -> string. Directory part of the (single) mapped path; ``""`` for a
    bare file name (0.96 produced a null value there; an empty string is what scripts
    expect)."""
    return os.path.dirname(_path_of(v))


@register("exists")
def exists(ctx: BuiltinContext, v: Any) -> bool:
    """exists(string|file) -> boolean. Whether the local file exists (relative paths
    against the run's base directory)."""
    return os.path.exists(_local(ctx, _path_of(v)))


async def _first_line(ctx: BuiltinContext, f: Any, what: str) -> str:
    text = await read_text(ctx, f, what)
    lines = text.splitlines()
    return lines[0] if lines else ""


@register("extractInt", deprecated=("extractint",))
async def extract_int(ctx: BuiltinContext, f: Any) -> int:
    """extractInt(file|string) -> int. Parses the first line of the file."""
    from swiftnb.engine.builtins.numbers import parse_java_int
    return parse_java_int((await _first_line(ctx, f, "extractInt")).strip())


@register("extractFloat", deprecated=("extractfloat",))
async def extract_float(ctx: BuiltinContext, f: Any) -> float:
    """extractFloat(file|string) -> float. Parses the first line of the file."""
    from swiftnb.engine.builtins.numbers import parse_java_double
    return parse_java_double(await _first_line(ctx, f, "extractFloat"))


@register("readData", deprecated=("readdata",), needs_return_type=True)
async def read_data(ctx: BuiltinContext, f: Any) -> Any:
    """T readData(file|string). Reads a primitive, primitive array, struct or struct array
    in the whitespace format (see docs/builtins.md; ``ctx.return_type`` gives T, read
    before the first wait: the context is shared by all calls)."""
    t = ctx.return_type
    path = _path_of(f)
    return datafiles.read_data(await read_text(ctx, path, "readData"), t, source=path)


@register("readStructured", "readData2", deprecated=("readstructured", "readdata2"),
          needs_return_type=True)
async def read_structured(ctx: BuiltinContext, f: Any) -> Any:
    """T readStructured(file|string). ``path = value`` lines (``rows[0].columns[1] = 2``)."""
    t = ctx.return_type
    path = _path_of(f)
    return datafiles.read_structured(await read_text(ctx, path, "readStructured"), t,
                                     source=path)


@register("writeData", deprecated=("writedata",), needs_return_file=True,
          needs_arg_types=True)
def write_data(ctx: BuiltinContext, v: Any) -> FileValue:
    """file writeData(any). Writes the value to the file it is assigned to (0.96 format)
    and returns that file.  ``ctx.return_file`` gives the destination, ``ctx.arg_types``
    the value's declared type (an empty array of structs still has its header line)."""
    dest = ctx.return_file
    if dest is None or dest.path is None:
        raise BuiltinError("writeData: the result must be assigned to a mapped file")
    vtype = as_data_type(ctx.arg_types[0]) if ctx.arg_types else None
    if isinstance(v, dict) and not v and isinstance(vtype, DataArrayType) and isinstance(vtype.elem, DataStructType):
        names = datafiles.java_hash_order([n for n, _ in vtype.elem.fields])
        text = "".join(n + " " for n in names) + "\n"
    else:
        text = datafiles.write_data(v, vtype)
    write_text(ctx, dest, text, "writeData")
    return dest


def write_text(ctx: BuiltinContext, dest: Any, text: str, who: str) -> None:
    """Put ``text`` in the file ``dest`` maps to, whole or not at all (a temporary
    beside it, renamed, and removed if writing fails), as ``writeData`` and trunk's
    ``write`` do."""
    path = _local(ctx, dest.path or "")
    folder = os.path.dirname(path)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass  # not made, or not removable: the write's own error is the one to report
        raise BuiltinError(f"{who}: cannot write {dest.path}: {e.strerror}") from None


# ------------------------------------------------------------------ arrays

@register("length")
def length(ctx: BuiltinContext, v: Any) -> int:
    """length(any[]|string) -> int. Array size (after the array closes) or string length."""
    if isinstance(v, (dict, str)):
        return len(v)
    raise BuiltinError(f"length: expected an array or a string, got {java_str(v)}")


# ------------------------------------------------------------------ processes

@register("system")
async def system(ctx: BuiltinContext, cmd: str) -> dict[int, str]:
    """string[] system(string cmd). Runs ``bash -c cmd`` in the base directory without
    blocking the engine; one array element per stdout line.  A non-zero exit fails the
    run: ``CMD returned exit code N`` plus the captured stderr."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", cmd, cwd=ctx.base_dir,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
    except OSError as e:
        raise BuiltinError(f"system: cannot run bash: {e.strerror}") from None
    try:
        out, err = await proc.communicate()
    except asyncio.CancelledError:
        # the run was cancelled: do not leave the command running behind it
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        raise
    if proc.returncode != 0:
        msg = f"{cmd} returned exit code {proc.returncode}"
        tail = err.decode("utf-8", "replace").rstrip()
        if tail:
            msg += "\n" + tail
        raise BuiltinError(msg)
    return dict(enumerate(_reader_lines(out.decode("utf-8", "replace"))))


_LINE_END = re.compile(r"\r\n|\r|\n")


def _reader_lines(text: str) -> list[str]:
    """The lines Java's ``BufferedReader.readLine`` gives (Swift read system's output
    so): split at ``\\n``, ``\\r`` or ``\\r\\n`` only (``str.splitlines`` also splits at
    form feeds and Unicode separators), a final terminator adding no empty line."""
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines
