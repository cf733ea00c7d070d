"""LocalStore's symlink policy (issue #21.5): ``follow_symlinks="inside"`` (the default) follows
links that stay inside the store root and refuses the others with SymlinkError, on reads (the
Store API and the C file batches of array reads) and writes; no write ever goes through a link
to a path outside the root."""

from __future__ import annotations

import os

import numpy as np
import pytest

import zarrbolt
from zarrbolt.errors import StoreError, SymlinkError
from zarrbolt.storage import LocalStore

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="POSIX symlinks")


@pytest.fixture
def tree(tmp_path):
    """An array ``root`` (8 chunks of 4) with chunk 0 written, and a directory ``outside`` with
    a secret file and an encoded chunk of its own."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    a = zarrbolt.create_array(LocalStore(root), shape=(32,), dtype="int32", chunks=(4,), compressors=None,
                              fill_value=0)
    a[:] = np.arange(32, dtype="int32")
    outside.mkdir()
    (outside / "secret").write_bytes(np.full(4, 99, "int32").tobytes())
    return root, outside


@pytest.mark.parametrize("policy, listed", [("inside", False), ("none", False), ("all", True)])
def test_refused_links_are_not_listed_nor_counted(tree, policy, listed):
    """A listing names what ``get`` serves: a chunk that is a link the policy refuses is neither
    listed nor counted by ``nchunks_initialized`` (fsck reports it)."""
    from zarrbolt.fsck import fsck

    root, outside = tree
    os.unlink(root / "c" / "1")
    os.symlink(outside / "secret", root / "c" / "1")
    store = LocalStore(root, follow_symlinks=policy)
    assert ("c/1" in set(store.list())) is listed
    assert ("c/1" in set(store.list_prefix("c/"))) is listed
    assert ("c/1" in set(store.list_dir("c"))) is listed
    assert zarrbolt.open_array(store, mode="r").nchunks_initialized == (8 if listed else 7)
    if policy == "inside":
        report = fsck(root)
        assert not report.ok
        assert [k for k, why in report.unreadable if "symbolic link the store refuses" in why] == ["c/1"]


def test_link_inside_the_root_is_followed(tree):
    root, _ = tree
    os.unlink(root / "c" / "1")
    os.symlink(root / "c" / "0", root / "c" / "1")
    store = LocalStore(root)
    assert store.get("c/1") == store.get("c/0")
    a = zarrbolt.open_array(store, mode="r")
    np.testing.assert_array_equal(a[4:8], [0, 1, 2, 3])  # (the C file batches)
    os.unlink(root / "c" / "2")
    os.symlink("0", root / "c" / "2")  # a relative link
    np.testing.assert_array_equal(zarrbolt.open_array(LocalStore(root), mode="r")[8:12], [0, 1, 2, 3])


def test_link_leaving_the_root_is_refused(tree):
    root, outside = tree
    os.unlink(root / "c" / "1")
    os.symlink(outside / "secret", root / "c" / "1")
    store = LocalStore(root)
    with pytest.raises(SymlinkError, match="outside the root"):
        store.get("c/1")
    with pytest.raises(SymlinkError):
        store.exists("c/1")
    with pytest.raises(SymlinkError):
        store.getsize("c/1")
    with pytest.raises(SymlinkError):
        zarrbolt.open_array(store, mode="r")[:]  # the C reads
    with zarrbolt.config.set(fused_pipeline=False), pytest.raises(SymlinkError):
        zarrbolt.open_array(LocalStore(root), mode="r")[4:8]
    # the other chunks still read
    np.testing.assert_array_equal(zarrbolt.open_array(LocalStore(root), mode="r")[:4], [0, 1, 2, 3])
    # a trusted store may follow it
    trusted = LocalStore(root, follow_symlinks="all")
    np.testing.assert_array_equal(zarrbolt.open_array(trusted, mode="r")[4:8], [99] * 4)


def test_directory_link_leaving_the_root(tree):
    root, outside = tree
    os.rename(root / "c", root / "c-moved")
    os.symlink(outside, root / "c")
    store = LocalStore(root)
    with pytest.raises(SymlinkError):
        store.get("c/secret")
    a = zarrbolt.open_array(store, mode="r+")
    with pytest.raises(SymlinkError):
        a[:]
    # writes never go through it: nothing appears outside, nothing is erased there
    with pytest.raises(SymlinkError):
        a[:] = 5
    with pytest.raises(SymlinkError):
        a[0:2] = 5
    with pytest.raises(SymlinkError):
        store.set("c/new", b"x")
    with pytest.raises(SymlinkError):
        store.erase("c/secret")
    with pytest.raises(SymlinkError):
        store.erase_prefix("c/se")
    assert sorted(os.listdir(outside)) == ["secret"]
    assert (outside / "secret").read_bytes() == np.full(4, 99, "int32").tobytes()


def test_write_replaces_a_link_never_writes_through_it(tree):
    root, outside = tree
    os.unlink(root / "c" / "1")
    os.symlink(outside / "secret", root / "c" / "1")
    store = LocalStore(root, follow_symlinks="all")  # even when links are followed for reading
    a = zarrbolt.open_array(store, mode="r+")
    a[4:8] = 7
    assert not os.path.islink(root / "c" / "1")
    assert (outside / "secret").read_bytes() == np.full(4, 99, "int32").tobytes()
    np.testing.assert_array_equal(a[4:8], [7] * 4)


def test_policy_none_refuses_every_link(tree):
    root, _ = tree
    os.unlink(root / "c" / "1")
    os.symlink(root / "c" / "0", root / "c" / "1")
    store = LocalStore(root, follow_symlinks="none")
    with pytest.raises(SymlinkError, match="is a symbolic link"):
        store.get("c/1")
    assert store.get("c/0") is not None
    assert store.with_read_only().follow_symlinks == "none"
    import pickle

    copy = pickle.loads(pickle.dumps(store))
    assert copy.follow_symlinks == "none"
    with pytest.raises(SymlinkError):
        copy.get("c/1")


def test_bad_policy():
    with pytest.raises(StoreError):
        LocalStore("x", follow_symlinks="sometimes")


@pytest.fixture
def shards(tmp_path):
    """A sharded array ``root`` (4 shards of 8, inner chunks of 4) and a directory ``outside``
    with a shard of another array of the same layout."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    kw = dict(shape=(32,), dtype="int32", chunks=(4,), shards=(8,), compressors=None, fill_value=0)
    a = zarrbolt.create_array(LocalStore(root), **kw)
    a[:] = np.arange(32, dtype="int32")
    other = zarrbolt.create_array(LocalStore(outside), **kw)
    other[:] = 99
    return root, outside


def test_shard_links_in_the_native_reads(shards):
    """The C shard reads open with O_NOFOLLOW: a shard file that is a link is read through the
    store, which follows it inside the root and refuses it elsewhere; a link made after the
    array's first read is seen at once (no listing of the directory is kept between reads)."""
    root, outside = shards
    a = zarrbolt.open_array(LocalStore(root), mode="r")
    np.testing.assert_array_equal(a[:], np.arange(32))
    os.unlink(root / "c" / "1")
    os.symlink("0", root / "c" / "1")  # inside the root (relative): followed
    np.testing.assert_array_equal(a[8:16], np.arange(8))
    np.testing.assert_array_equal(a[10:12], [2, 3])  # a part of the shard
    os.unlink(root / "c" / "1")
    os.symlink(outside / "c" / "1", root / "c" / "1")  # outside: refused, never read
    with pytest.raises(SymlinkError, match="outside the root"):
        a[8:16]
    with pytest.raises(SymlinkError):
        a[:]
    with zarrbolt.config.set(fused_pipeline=False), pytest.raises(SymlinkError):  # the Store way: not "missing"
        zarrbolt.open_array(LocalStore(root), mode="r")[8:16]
    np.testing.assert_array_equal(a[16:], np.arange(16, 32))  # the other shards still read
    np.testing.assert_array_equal(zarrbolt.open_array(LocalStore(root, follow_symlinks="all"), mode="r")[8:16],
                                  [99] * 8)
    os.unlink(root / "c" / "1")
    os.symlink("0", root / "c" / "1")
    with pytest.raises(SymlinkError, match="is a symbolic link"):
        zarrbolt.open_array(LocalStore(root, follow_symlinks="none"), mode="r")[8:16]


def test_a_chunk_link_made_between_reads_is_seen(tree):
    root, outside = tree
    a = zarrbolt.open_array(LocalStore(root), mode="r")
    np.testing.assert_array_equal(a[4:8], [4, 5, 6, 7])
    os.unlink(root / "c" / "1")
    os.symlink(outside / "secret", root / "c" / "1")
    with pytest.raises(SymlinkError):
        a[4:8]


def test_getsize_of_a_link_loop_is_an_error_not_a_missing_key(tree):
    """A file that cannot be reached (here a link to itself) is a StoreIOError naming the key,
    never "not found": a shard read through the store would otherwise take it for absent."""
    from zarrbolt.errors import StoreIOError

    root, _ = tree
    os.unlink(root / "c" / "1")
    os.symlink(root / "c" / "1", root / "c" / "1")
    with pytest.raises(StoreIOError, match="c/1"):
        LocalStore(root).getsize("c/1")
    with pytest.raises(StoreError, match="not found"):
        LocalStore(root).getsize("c/9")
