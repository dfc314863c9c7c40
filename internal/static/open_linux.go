package static

import (
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// openHow is the kernel's struct open_how (linux/openat2.h).
type openHow struct {
	flags   uint64
	mode    uint64
	resolve uint64
}

const (
	oPath               = 0x200000 // O_PATH, which package syscall lacks on some architectures
	resolveNoMagiclinks = 0x02     // RESOLVE_NO_MAGICLINKS: no /proc/*/fd style jumps
	resolveBeneath      = 0x08     // RESOLVE_BENEATH: no absolute path, symlink or ".." leaving dirfd
)

// sysOpenat2 is openat2's number: one value on every Linux architecture Go
// supports, except the MIPS ABIs, whose tables start at an offset.
func sysOpenat2() uintptr {
	switch runtime.GOARCH {
	case "mips", "mipsle":
		return 4437
	case "mips64", "mips64le":
		return 5437
	}
	return 437
}

func openat2(dirfd int, name string, flags uint64) (int, error) {
	p, err := syscall.BytePtrFromString(name) // refuses NUL
	if err != nil {
		return -1, err
	}
	how := openHow{flags: flags, resolve: resolveBeneath | resolveNoMagiclinks}
	// EAGAIN: a rename or mount raced a ".." in a symlink target and the kernel
	// could not prove the result stays beneath; it asks for a retry.
	for tries := 0; ; tries++ {
		fd, _, errno := syscall.Syscall6(sysOpenat2(), uintptr(dirfd), uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		switch {
		case errno == 0:
			return int(fd), nil
		case errno == syscall.EINTR, errno == syscall.EAGAIN && tries < 3:
			continue
		}
		return -1, errno
	}
}

// openat2Dir opens dir as a handle for openat2 and tries openat2 on it once:
// usable is false when the kernel predates it or a seccomp filter refuses it.
func openat2Dir(dir string) (fd int, usable bool, err error) {
	fd, err = syscall.Open(dir, oPath|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, false, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	probe, err := openat2(fd, ".", oPath|syscall.O_CLOEXEC)
	if err != nil {
		syscall.Close(fd)
		return -1, false, nil
	}
	syscall.Close(probe)
	return fd, true, nil
}

func openat2File(dirfd int, rel string) (*os.File, fileMeta, error) {
	fd, err := openat2(dirfd, rel, openFlags)
	if err != nil {
		return nil, fileMeta{}, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, fileMeta{}, errNotRegular
	}
	m := fileMeta{size: int64(st.Size), mtime: time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)), ino: uint64(st.Ino)}
	return os.NewFile(uintptr(fd), rel), m, nil
}
