"""A repository's objects, read and written through one dulwich object store per objects folder in this process:
every Repo and every thread on that repository shares it, so a pack and its index are mapped once, not once
for each Repo that reads them (the engine's, the narrator's, each landing thread's).

dulwich's pack reads index a mapping at explicit offsets and lock their own cache of deltas, but its store's list
of packs (a dict, rescanned on a missed object), a pack's index and data (opened on first use, unlocked) and the
order it keeps them in are not guarded: two threads opening one pack at once would each map it. So the store is
asked one caller at a time (a lock); a read is some microseconds, against the checks the landing's threads wait
on. And on a missed object (one written loose since the store opened) dulwich lists the pack folder each time:
here it lists it only when the folder changed since it was last listed.
"""

from __future__ import annotations

import os
import time
from _thread import allocate_lock  # threading.Lock itself, without importing threading

from git_balanced import process

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

# A folder changed less than this long ago is listed again however its time reads: a time may not move when two
# writes fall in one tick of the file system's clock.
SETTLED_SECONDS = 2.0


class Objects:
    """One objects folder's dulwich store, shared by this process's Repos and threads: `objects[id]` (a
    dulwich object, KeyError when missing) and `add_object(obj)` (written loose), one caller at a time."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._lock = allocate_lock()
        self._listed: tuple[int, int] | None = None  # the pack folder's (inode, time) when last listed
        self._list_packs = store._update_pack_cache
        store._update_pack_cache = self._packs_if_changed  # dulwich calls it on a miss, and for `packs`

    def __getitem__(self, sha: bytes) -> Any:
        with self._lock:
            return self._store[sha]

    def add_object(self, obj: Any) -> None:
        with self._lock:
            self._store.add_object(obj)

    def add_raw(self, kind: str, body: bytes) -> str:
        """Write the object of type `kind` ("blob", "tree", "commit") and content `body` loose, as git writes
        one (a new file renamed into place; one already there has its time refreshed, so no gc prunes it
        before a ref names it); returns its id. Written here, without dulwich's objects and lock file, in a
        plain SHA-1 repository; through dulwich in any other (shared permissions, fsynced objects, SHA-256)."""
        store = self._store
        if store.shared_perm is not None or store.fsync_object_files or store.object_format.name != "sha1":
            from dulwich.objects import ShaFile

            obj = ShaFile.from_raw_string(TYPES[kind], body)
            self.add_object(obj)
            return str(obj.id.decode())
        import hashlib  # here, with zlib: the board and the inbox write no object
        import zlib

        raw = b"%s %d\0" % (kind.encode(), len(body)) + body
        sha = hashlib.sha1(raw).hexdigest()
        folder = os.path.join(store.path, sha[:2])
        path = os.path.join(folder, sha[2:])
        try:
            os.utime(path)
            return sha
        except (FileNotFoundError, PermissionError):  # not there (or not ours to touch): written below
            pass
        _write_new(folder, path, zlib.compress(raw, store.loose_compression_level))
        return sha

    def close(self) -> None:
        """Unmap its packs (a read after it maps them again)."""
        with self._lock:
            self._store.close()
            self._listed = None

    def _packs_if_changed(self) -> list[Any]:
        """dulwich's listing of the pack folder (the packs new since the last one), done only when the folder
        changed since then, or changed within SETTLED_SECONDS; [] (no new pack) otherwise, as the listing would."""
        try:
            st = os.stat(self._store.pack_dir)
        except OSError:
            return list(self._list_packs())
        seen = (st.st_ino, st.st_mtime_ns)
        if seen == self._listed and time.time() - st.st_mtime > SETTLED_SECONDS:
            return []
        found = list(self._list_packs())
        self._listed = seen  # the time read before the listing: a pack added meanwhile is listed next time
        return found


TYPES = {"commit": 1, "tree": 2, "blob": 3}


def _write_new(folder: str, path: str, data: bytes) -> None:
    """`data` at `path` (read-only, as git leaves an object), through a new file of its own in `folder` renamed
    into place, so no reader sees it half written; the fan-out folder is made when it is missing."""
    tmp = os.path.join(folder, f"tmp_obj_{os.getpid()}_{os.urandom(4).hex()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    except FileNotFoundError:
        os.makedirs(folder, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.rename(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class _Stores(process.Bounded[tuple[str, int, int], Objects]):
    """This process's shared stores, by objects folder (its real path, device and inode: a folder removed and
    made again is another one); a store dropped for a newer one is closed."""

    KEEP = 16

    def __init__(self) -> None:
        super().__init__()
        self.lock = allocate_lock()

    def put(self, key: tuple[str, int, int], value: Objects) -> None:
        if key not in self._items and len(self._items) >= self.KEEP:
            self._items.pop(next(iter(self._items))).close()
        self._items[key] = value

    def close(self) -> None:
        """Close them all (process.forget)."""
        with self.lock:
            items, self._items = self._items, {}
        for found in items.values():
            found.close()


def shared(dul: Any) -> Objects:
    """The shared store of the objects folder of `dul` (a dulwich Repo): its own store, the first time."""
    path = os.path.realpath(dul.object_store.path)
    try:
        st = os.stat(path)
        key = (path, st.st_dev, st.st_ino)
    except OSError:  # no such folder: dulwich says what it finds there, at each read
        key = (path, 0, 0)
    stores = process.part(_Stores)
    with stores.lock:
        return stores.made(key, lambda: Objects(dul.object_store))
