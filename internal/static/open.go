//go:build unix

package static

import (
	"os"
	"strconv"
	"syscall"
	"time"
)

// staticRoot is the docroot, held open. Names are resolved beneath it by
// openat2(2) where the kernel has it (one system call, no race with renames),
// else by os.Root, which walks the name one component at a time with
// O_NOFOLLOW and follows a symlink only if its target stays beneath the root:
// both refuse absolute symlinks and any that climb out, so the two agree.
type staticRoot struct {
	fd   int      // directory handle for openat2, or -1
	root *os.Root // the walk, when openat2 is unavailable
}

// openStaticRoot opens dir, for openat2 unless walk is set or the kernel (or a
// seccomp filter) refuses openat2.
func openStaticRoot(dir string, walk bool) (*staticRoot, error) {
	if !walk {
		fd, usable, err := openat2Dir(dir)
		if err != nil {
			return nil, err
		}
		if usable {
			return &staticRoot{fd: fd}, nil
		}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &staticRoot{fd: -1, root: r}, nil
}

// openFlags keep open(2) itself harmless on whatever sits in the docroot:
// O_NONBLOCK so a FIFO does not wait for a writer, O_NOCTTY so a terminal is
// not adopted. Anything but a regular file is closed right after.
const openFlags = syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK | syscall.O_NOCTTY

// open returns rel, a regular file beneath the root, and its metadata.
func (r *staticRoot) open(rel string) (*os.File, fileMeta, error) {
	if r.root == nil {
		return openat2File(r.fd, rel)
	}
	f, err := r.root.OpenFile(rel, openFlags, 0)
	if err != nil {
		return nil, fileMeta{}, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fileMeta{}, errNotRegular
	}
	m := fileMeta{size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		m.ino = uint64(st.Ino)
	}
	return f, m, nil
}

type fileMeta struct {
	size  int64
	mtime time.Time
	ino   uint64
}

// etag names one version of one file: the inode tells a file replaced by
// rename from the old one even when size and mtime were carried over, and the
// coding tells a compressed sibling's bytes from the original's.
func (m fileMeta) etag(coding string) string {
	b := make([]byte, 0, 64)
	b = append(b, '"')
	b = strconv.AppendUint(b, m.ino, 36)
	b = append(b, '-')
	b = strconv.AppendInt(b, m.size, 36)
	b = append(b, '-')
	b = strconv.AppendInt(b, m.mtime.UnixNano(), 36)
	if coding != "" {
		b = append(b, '-')
		b = append(b, coding...)
	}
	b = append(b, '"')
	return string(b)
}
