"""Where a mapped file is as the app sees it: one rule (:func:`job_name`) for the job
directory's names of relative, ``..`` and absolute paths, the app's argument words
renamed by it (:func:`job_args`), and the Swift stage-out globs of dynamic outputs."""

from __future__ import annotations

import os
import re


PARENT = "__parent__"
#: where an absolute mapped path ``/d/f`` lives inside the job directory (and under a
#: remote site's ``shared/``): ``__root__/d/f``, Swift's name for it
ROOT = "__root__"


def in_job(rel: str) -> str:
    """A relative mapped path as the job sees it: ``../x`` is ``__parent__/x`` (Swift's
    name for it), so that it stays inside the job directory."""
    norm = os.path.normpath(rel)
    if norm != ".." and not norm.startswith(".." + os.sep):
        return norm
    return os.path.join(*(PARENT if part == ".." else part for part in norm.split(os.sep)))


def job_name(path: str) -> str:
    """The one rule for where a mapped file is, as the app sees it: a path relative to
    its job directory.  Plain relative paths stay as they are, ``..`` becomes
    ``__parent__`` and an absolute ``/d/f`` becomes ``__root__/d/f`` (Swift 0.96's
    remote names), so that nothing the app writes lands outside its job directory before
    the wrapper moves it, whole, to its mapped place."""
    if os.path.isabs(path):
        return ROOT + os.path.normpath(path)
    return in_job(path)


#: characters that end a path inside an argument word (``--out=PATH``, ``a,b``, ``x:y``,
#: a shell command's words and redirections)
_PATH_END = " \t\n\r=:,;'\"()<>|&{}`"


def job_args(args: list[str], names: dict[str, str]) -> list[str]:
    """The app's argument words with each mapped path of ``names`` (mapped path -> name
    in the job directory) renamed wherever it stands as a whole path: the entire word
    or a part between separators (``--out=../x``, ``sh -c "cat /d/in > /d/out"``).  A
    longer path is never cut: ``/d/f`` is not renamed inside ``/d/f.bak`` or ``/e/d/f``.
    This is what makes an output's name in any argument and in ``stdout=`` agree."""
    if not names:
        return list(args)
    alternatives = "|".join(re.escape(p) for p in sorted(names, key=len, reverse=True))
    end = re.escape(_PATH_END)
    pattern = re.compile(f"(?:(?<=[{end}])|^)(?:{alternatives})(?=[{end}]|$)")
    out = []
    for word in args:
        renamed = names.get(word)
        if renamed is not None:
            out.append(renamed)
        else:
            out.append(pattern.sub(lambda m: names[m.group(0)], word))
    return out


def _inside(root: str, rel: str) -> str | None:
    """Where a relative mapped path lives in the job directory ``root`` (``..`` as
    ``__parent__``); None for an absolute path or the directory itself."""
    norm = os.path.normpath(rel)
    if os.path.isabs(norm) or norm == ".":
        return None
    return os.path.join(root, in_job(norm))


def _glob_parts(glob: str) -> list[str] | None:
    """The components of a relative stage-out glob, or None when it is absolute or
    leaves the job directory (those files are written in place by the app)."""
    if not glob or os.path.isabs(glob):
        return None
    parts = [p for p in glob.split("/") if p and p != "."]
    if not parts or ".." in parts or parts[-1] == "**":
        return None
    return parts


def _component_match(token: str, name: str) -> bool:
    """One path component of a Swift glob: ``*`` any characters, ``?`` one, the rest
    literal (no character classes, as Swift escaped ``[]``)."""
    rx = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in token)
    return re.fullmatch(rx, name, re.S) is not None


def glob_files(root: str, glob: str) -> list[str]:
    """Files under ``root`` matching a Swift stage-out glob (``*`` ``?`` per component,
    ``**`` any depth of directories, the last component files), as sorted relative
    paths.  Symlinked directories are not entered (a staged input directory is already
    in its place); a symbolic link the last component matches is returned, whatever it
    points to, for the stage-out to copy or refuse (staged inputs are left out by the
    caller)."""
    parts = _glob_parts(glob)
    if parts is None:
        return []
    found: set[str] = set()

    def walk(rel: str, pos: int) -> None:
        token = parts[pos]
        here = os.path.join(root, rel) if rel else root
        last = pos == len(parts) - 1
        if not last and token != "**" and "*" not in token and "?" not in token:
            sub = os.path.join(here, token)  # a literal directory: no listing needed
            if os.path.isdir(sub) and not os.path.islink(sub):
                walk(f"{rel}/{token}" if rel else token, pos + 1)
            return
        try:
            entries = list(os.scandir(here))
        except OSError:
            return
        for e in entries:
            child = f"{rel}/{e.name}" if rel else e.name
            if e.is_symlink():
                if last and _component_match(token, e.name):
                    found.add(child)
                continue
            if last:
                if e.is_file() and _component_match(token, e.name):
                    found.add(child)
            elif token == "**":
                if e.is_dir():
                    walk(child, pos)  # one more directory level
            elif e.is_dir() and _component_match(token, e.name):
                walk(child, pos + 1)
        if token == "**":
            walk(rel, pos + 1)  # no (more) directory level

    walk("", 0)
    return sorted(found)
