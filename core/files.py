"""Output files written whole or not at all (results, CSV tables, model files)."""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile


@contextlib.contextmanager
def written_whole(path, mode, **kwargs):
    """A file object that writes ``path`` whole or not at all: a regular file (or a new one) is
    written to a new file beside it and moved over it once complete, so a write that fails or is
    interrupted (Ctrl-C on a 200,000-row CSV left 3,013 rows) leaves what was there. A symbolic
    link is written through; the file replaced keeps its permissions (a new one gets the umask's).
    Written in place: anything but a regular file (a device, a pipe), a file with other hard links
    (which would keep the old text), and a file in a folder that takes no new file."""
    real = os.path.realpath(path)
    # a link to what has no path of its own (/dev/stdout on a pipe: /proc/self/fd/1 -> "pipe:[n]",
    # which realpath makes a path that does not exist): written through the link, in place
    path = real if os.path.exists(real) or not os.path.exists(path) else path
    part = None
    if not os.path.exists(path) or (os.path.isfile(path) and os.stat(path).st_nlink == 1):
        try:
            fd, part = tempfile.mkstemp(dir=os.path.dirname(path), prefix=f".{os.path.basename(path)}.",
                                        suffix=".partial")
        except OSError:     # (a missing folder: the write in place names the path as given)
            part = None
    if part is None:
        with open(path, mode, **kwargs) as fh:
            yield fh
        return
    try:
        with open(fd, mode, **kwargs) as fh:
            yield fh
        if os.path.exists(path):
            shutil.copymode(path, part)
        else:
            os.chmod(part, 0o666 & ~umask())
        os.replace(part, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(part)
        raise


def umask() -> int:
    """The process's umask, the mode bits a new file is created without."""
    mask = os.umask(0o022)      # (the only way to read it is to set it)
    os.umask(mask)
    return mask


def unwritable(path) -> str | None:
    """Why ``path`` cannot be written, or None. As the file is written (written_whole):
    a new file, or one replacing a file, needs a folder that exists and takes it; an existing file
    (a device too) is otherwise written in place."""
    if not path:    # (`--csv "$OUT"` with OUT unset: the run went without its table, exit 0)
        return "the path is empty; give a file name"
    if os.path.isdir(path):
        return "it is a folder; give a file name"
    try:
        os.stat(path)
    except OSError as exc:      # (a name past the file system's limit, 255 bytes on most: found after the run)
        if exc.errno == errno.ENAMETOOLONG:
            return f"the name is too long for the file system ({exc.strerror}); give a shorter one"
    folder = os.path.dirname(os.path.realpath(path))     # (a link is written through to its target)
    if os.path.exists(path) and os.access(path, os.W_OK):
        return None
    if not os.path.isdir(folder):
        return f"{folder} is a file, not a folder" if os.path.exists(folder) else f"the folder {folder} does not exist"
    if os.access(folder, os.W_OK | os.X_OK) and (not os.path.exists(path) or os.path.isfile(path)):
        return None
    return "the file is read-only" if os.path.exists(path) else f"the folder {folder} is not writable"
