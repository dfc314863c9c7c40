//go:build unix && !linux

package static

import (
	"os"
	"syscall"
)

// Without openat2 the docroot is always walked with os.Root.
func openat2Dir(string) (int, bool, error) { return -1, false, nil }

func openat2File(int, string) (*os.File, fileMeta, error) {
	return nil, fileMeta{}, syscall.ENOSYS
}
