package testenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ErrBinaryNotFound is wrapped by Start when etcd or kube-apiserver is
// missing, so that callers can tell "not set up here" from a real failure.
var ErrBinaryNotFound = errors.New("test environment binary not found")

// Environment variables that point at the binaries.
const (
	// EnvKubeAPIServer overrides the kube-apiserver binary; the default is
	// .cache/bin/kube-apiserver in the repository, built by
	// `make kube-apiserver`.
	EnvKubeAPIServer = "KUBE_APISERVER"
	// EnvEtcd overrides the etcd binary; the default is etcd in PATH
	// (Debian's etcd-server package).
	EnvEtcd = "ETCD"
)

// modulePath identifies the repository root while walking up from the
// working directory.
const modulePath = "github.com/causeway/causeway"

// binaries are the resolved absolute paths of the programs Start runs.
type binaries struct {
	kubeAPIServer string
	etcd          string
}

// findBinaries resolves both binaries from the environment and defaults.
// A missing binary yields an error wrapping ErrBinaryNotFound that says how
// to get it.
func findBinaries() (binaries, error) {
	var b binaries
	var err error
	if b.etcd, err = findEtcd(); err != nil {
		return b, err
	}
	if b.kubeAPIServer, err = findKubeAPIServer(); err != nil {
		return b, err
	}
	return b, nil
}

func findEtcd() (string, error) {
	if p := os.Getenv(EnvEtcd); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("%w: etcd from $%s: %v", ErrBinaryNotFound, EnvEtcd, err)
		}
		return filepath.Abs(p)
	}
	p, err := exec.LookPath("etcd")
	if err != nil {
		return "", fmt.Errorf("%w: etcd is not in PATH: install Debian's etcd-server package (apt-get install etcd-server) or set $%s", ErrBinaryNotFound, EnvEtcd)
	}
	return filepath.Abs(p)
}

func findKubeAPIServer() (string, error) {
	if p := os.Getenv(EnvKubeAPIServer); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("%w: kube-apiserver from $%s: %v", ErrBinaryNotFound, EnvKubeAPIServer, err)
		}
		return filepath.Abs(p)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", fmt.Errorf("%w: locate kube-apiserver: %v; set $%s", ErrBinaryNotFound, err, EnvKubeAPIServer)
	}
	p := filepath.Join(root, ".cache", "bin", "kube-apiserver")
	if err := checkExecutable(p); err != nil {
		return "", fmt.Errorf("%w: kube-apiserver: %v: run `make kube-apiserver` to build it (or set $%s)", ErrBinaryNotFound, err, EnvKubeAPIServer)
	}
	return p, nil
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// RepoRoot walks up from the working directory to the directory whose
// go.mod declares this module. Tests run in their package directory and
// `go run` in the caller's, so both find it.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("get working directory: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && declaresModule(data, modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod for module %s above the working directory", modulePath)
		}
		dir = parent
	}
}

// declaresModule reports whether go.mod content declares module path.
func declaresModule(gomod []byte, path string) bool {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 2 && string(f[0]) == "module" {
			return string(bytes.Trim(f[1], `"`)) == path
		}
	}
	return false
}
