// Package testenv runs a real, throwaway Kubernetes control plane for
// end-to-end tests: Debian's etcd and a kube-apiserver built from the Go
// module proxy (see hack/build-kube-apiserver.sh), both on loopback ports
// with their state in a temporary directory.
//
// Unlike a fake clientset, the API server enforces authentication, RBAC,
// admission and validation, so tests can check that the controller works
// with exactly the permissions its ClusterRole grants, and can stop and
// restart the API server to exercise outages. There is no controller
// manager, scheduler or kubelet: objects are stored and served, nothing
// reconciles them (no pods for Deployments, no EndpointSlices for Services,
// no default ServiceAccount in new namespaces).
package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Options configure Start. The zero value is a working default.
type Options struct {
	// ExtraAPIServerArgs are appended to kube-apiserver's flags, for example
	// "--egress-selector-config-file=...". For single-valued flags the last
	// occurrence wins, so these can also override the defaults.
	ExtraAPIServerArgs []string

	// StartTimeout bounds how long Start and StartAPIServer wait for
	// readiness when their context has no deadline. Zero means 2 minutes,
	// enough for a first start on a loaded 2-core machine.
	StartTimeout time.Duration

	// Address is the IP kube-apiserver binds, advertises and is reached
	// at; empty means 127.0.0.1. A non-loopback address (a real node's,
	// test/cluster) also turns on the endpoint reconciler, so that Pods
	// reach the API through the "kubernetes" Service.
	Address string
	// Port is kube-apiserver's secure port; zero picks a free one.
	Port int
	// Dir, if set, is the directory of the environment's state instead
	// of a new temporary one; Stop removes it too.
	Dir string
	// Users are extra identities, each with a static token and a
	// kubeconfig (UserKubeconfig): the components of a real node
	// authenticate as themselves, as they would in any cluster.
	Users []User
}

// User is an identity kube-apiserver's static token file authenticates.
type User struct {
	Name   string
	Groups []string
}

const defaultStartTimeout = 2 * time.Minute

// Env is a running etcd and kube-apiserver. Create it with Start and always
// call Stop. Its methods are safe for concurrent use.
type Env struct {
	// Dir holds the state of the environment: etcd data, keys, kubeconfigs
	// and the logs etcd.log and kube-apiserver.log. Stop removes it.
	Dir string
	// AdminKubeconfig is the path of a kubeconfig for the admin user
	// (group system:masters), with the CA embedded.
	AdminKubeconfig string

	opts          Options
	bins          binaries
	creds         apiServerCredentials
	etcd          *etcd
	apiServerURL  string
	apiServerArgs []string

	mu        sync.Mutex
	apiServer *Process // the current kube-apiserver process; guarded by mu
	caData    []byte   // the serving CA bundle; set once during Start
	stopped   bool     // guarded by mu
	stopErr   error    // guarded by mu
}

// Start starts etcd and kube-apiserver and returns once the API is ready.
// ctx bounds the wait only; the processes run until Env.Stop. On error
// everything started so far is stopped again.
//
// If a binary is missing the error wraps ErrBinaryNotFound and says how to
// get it (`make kube-apiserver` for the API server).
func Start(ctx context.Context, opts Options) (*Env, error) {
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	dir := opts.Dir
	if dir == "" {
		dir, err = os.MkdirTemp("", "causeway-testenv-")
	} else {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return nil, fmt.Errorf("create testenv dir: %w", err)
	}
	e := &Env{Dir: dir, opts: opts, bins: bins}
	if err := e.start(ctx); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	return e, nil
}

func (e *Env) start(ctx context.Context) error {
	ctx, cancel := e.startContext(ctx)
	defer cancel()

	var err error
	if e.creds, err = writeAPIServerCredentials(e.Dir, e.opts.Users); err != nil {
		return err
	}
	if e.etcd, err = startEtcd(ctx, e.bins.etcd, e.Dir); err != nil {
		return err
	}

	// The port is chosen once and kept, so that a restarted API server is
	// reachable at the same URL by clients created before the outage.
	// Unlike etcd, a lost race for the port is not retried: it would change
	// the URL, and kube-apiserver's failure message is clear.
	port := e.opts.Port
	if port == 0 {
		ports, err := freePorts(1)
		if err != nil {
			return err
		}
		port = ports[0]
	}
	address := e.opts.Address
	if address == "" {
		address = "127.0.0.1"
	}
	e.apiServerURL = "https://" + net.JoinHostPort(address, strconv.Itoa(port))
	e.apiServerArgs = apiServerArgs(e.etcd.clientURL, address, port, e.creds, e.opts.ExtraAPIServerArgs)

	e.mu.Lock()
	err = e.startAPIServerLocked(ctx)
	e.mu.Unlock()
	if err != nil {
		return err
	}

	e.AdminKubeconfig = filepath.Join(e.Dir, "admin.kubeconfig")
	if err := writeKubeconfig(e.AdminKubeconfig, e.apiServerURL, e.caData, AdminUser, e.creds.adminToken, ""); err != nil {
		return fmt.Errorf("write admin kubeconfig: %w", err)
	}
	return nil
}

// startContext applies Options.StartTimeout when ctx has no deadline.
func (e *Env) startContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	timeout := e.opts.StartTimeout
	if timeout <= 0 {
		timeout = defaultStartTimeout
	}
	return context.WithTimeout(ctx, timeout)
}

// Stop stops kube-apiserver, then etcd, and removes Dir. It is safe to call
// more than once; later calls return the first call's result.
func (e *Env) Stop() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return e.stopErr
	}
	e.stopped = true
	// API server first: stopping etcd under it would only produce noise.
	if e.apiServer != nil {
		e.apiServer.Stop(apiServerStopGrace)
	}
	if e.etcd != nil {
		e.etcd.proc.Stop(10 * time.Second)
	}
	if err := os.RemoveAll(e.Dir); err != nil {
		e.stopErr = fmt.Errorf("remove testenv dir: %w", err)
	}
	return e.stopErr
}

// LogTails returns the last n lines of the etcd and kube-apiserver logs, for
// explaining a failed test. It must be called before Stop.
func (e *Env) LogTails(n int) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var s string
	if e.etcd != nil {
		s += fmt.Sprintf("--- %s\n%s\n", e.etcd.proc.LogPath, e.etcd.proc.LogTail(n))
	}
	if e.apiServer != nil {
		s += fmt.Sprintf("--- %s\n%s\n", e.apiServer.LogPath, e.apiServer.LogTail(n))
	}
	return s
}
