package metrics

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// ListenSocket listens on the unix socket at path, where nginx's workers
// send their request counts. The socket is readable and writable by its
// owner and by the group of its directory only: the state directory gives
// that group to nginx's workers, and nobody else may send counts.
func ListenSocket(path string) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("metrics socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("metrics socket: %w", err)
	}
	fail := func(err error) (net.Listener, error) {
		ln.Close()
		return nil, fmt.Errorf("metrics socket: %w", err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		return fail(err)
	}
	st, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return fail(err)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		if err := os.Lchown(path, -1, int(sys.Gid)); err != nil && !errors.Is(err, syscall.EPERM) {
			return fail(err)
		}
	}
	return ln, nil
}
