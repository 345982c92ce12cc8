package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/render"
)

// Options configure a Manager.
type Options struct {
	// Binary is the nginx (or angie) executable.
	Binary   string
	StateDir layout.Dir
	Log      *slog.Logger
	// Output receives nginx's own stderr and stdout (its error and access
	// logs), a whole line per Write; the controller's stderr by default.
	Output io.Writer
	// VerifyTimeout bounds the wait for new workers to answer with the new
	// configuration version after a reload.
	VerifyTimeout time.Duration
	// WorkerUser is the user nginx workers run as when the controller runs
	// as root (render emits the matching "user" directive). Secret files
	// are owned by it, since workers read certificates at handshake time.
	WorkerUser string
	// HealEvery is how often the state directory is checked against what
	// was last written, and repaired (10s by default).
	HealEvery time.Duration
}

// ConfigError is returned when nginx -t rejects the files. Output is
// nginx's message, which names the offending file.
type ConfigError struct{ Output string }

func (e *ConfigError) Error() string { return "nginx -t failed: " + e.Output }

// ApplyResult describes one Apply.
type ApplyResult struct {
	// Changed names the files (relative to the state directory) the Apply
	// wrote or removed; Removed the secrets it dropped.
	Changed, Removed []string
	// Reloaded is true when nginx was reloaded (or started) and verified.
	Reloaded bool
	Duration time.Duration
	// Write is the part of Duration spent writing and removing files;
	// the rest is nginx -t (at the start only) and the reload until the
	// new workers answered.
	Write time.Duration
}

// Manager owns the nginx master process and the files it reads.
type Manager struct {
	opts   Options
	client *http.Client

	mu     sync.Mutex // serialises Apply, start and stop
	access access
	files  fileSet // what is on disk now: always the last good set
	// static are files written with every configuration and healed like
	// it (the Lua modules), by path relative to the state directory.
	static render.Files
	// beforeOpen runs before nginx starts or reloads, when it opens its
	// log files by name again (SetBeforeOpen).
	beforeOpen func()
	// health is why the state directory cannot be brought up to date, or
	// what nginx's workers cannot reach (nil when all is well). It is
	// atomic, not under mu: readiness probes must not wait for a reload.
	health  atomic.Pointer[error]
	version string // the version live in nginx
	proc    *os.Process
	exited  chan struct{} // closed when proc exits
	// masterPID mirrors proc's pid outside mu, for MasterPID.
	masterPID atomic.Int64
	stopped   bool

	spawner spawner
	logs    *logPipe

	// Respawned receives a value after nginx was restarted following a
	// crash, so the controller can re-push dynamic state.
	Respawned chan struct{}
}

// NewManager prepares the state directory. It does not start nginx: the
// first Apply does, so nginx never runs without a verified configuration.
func NewManager(opts Options) (*Manager, error) {
	if opts.Output == nil {
		opts.Output = os.Stderr
	}
	if opts.VerifyTimeout == 0 {
		opts.VerifyTimeout = 15 * time.Second
	}
	if opts.HealEvery == 0 {
		opts.HealEvery = 10 * time.Second
	}
	acc, err := accessFor(opts.WorkerUser)
	if err != nil {
		return nil, err
	}
	if err := prepareStateDir(opts.StateDir, acc); err != nil {
		return nil, err
	}
	if err := ensureDefaultCert(opts.StateDir, time.Now(), acc.worker); err != nil {
		return nil, err
	}
	sock := opts.StateDir.StatusSocket()
	m := &Manager{
		opts:      opts,
		access:    acc,
		files:     fileSet{dir: opts.StateDir, files: render.Files{}, access: acc},
		Respawned: make(chan struct{}, 1),
		client: &http.Client{
			Timeout: 2 * time.Second,
			Transport: &http.Transport{
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, "unix", sock)
				},
				DisableKeepAlives: true, // each poll must be free to reach a new worker
			},
		},
	}
	if err := m.stopLeftover(); err != nil {
		return nil, err
	}
	if m.logs, err = newLogPipe(opts.Output); err != nil {
		return nil, fmt.Errorf("nginx log pipe: %w", err)
	}
	return m, nil
}

// Version returns the configuration version the live workers report.
func (m *Manager) Version() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.version
}

// Apply makes files live: it writes what changed, reloads nginx (or checks
// the files with nginx -t and starts it) and waits until a worker of the
// new generation reports version. When nginx refuses the files or the new
// version never shows, the last good files are restored and nginx keeps
// serving them.
//
// Certificates are read by nginx at each handshake and password files at
// each request (see render), so when only such secret files changed they
// are checked and written without a reload. Files no longer referenced are removed only once the
// configuration that stopped using them is live.
func (m *Manager) Apply(ctx context.Context, files render.Files, version string) (ApplyResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return ApplyResult{}, errors.New("nginx manager is stopped")
	}
	files = m.withStatic(files)
	// A failure is kept in Health; writing below fails on its own if the
	// disk cannot take the files.
	m.heal()
	if m.proc != nil && m.files.equal(files) && m.version == version {
		return ApplyResult{}, nil
	}
	start := time.Now()
	last := m.files.files
	written, err := m.files.write(files)
	if err != nil {
		m.restore(last)
		return ApplyResult{}, err
	}
	res := ApplyResult{Changed: written, Removed: append([]string(nil), m.files.stale...), Write: time.Since(start)}
	if err := m.probeCertificates(ctx, secretFiles(written)); err != nil {
		m.restore(last)
		return ApplyResult{}, err
	}
	if m.proc != nil && m.version == version && len(configFiles(written))+len(configFiles(res.Removed)) == 0 {
		// Only certificates or password files changed: live at the next
		// handshake or request.
		return res, m.files.prune()
	}
	if m.proc == nil {
		// Nothing serves yet: check first, so that a refusal names its
		// culprit rather than ending the master. A running master checks
		// the files itself at the reload (refusal.go).
		if out, err := m.test(ctx); err != nil {
			m.restore(last)
			return ApplyResult{}, err
		} else if out != "" {
			m.opts.Log.Warn("nginx -t warnings", "output", out)
		}
	}
	serving := m.proc != nil
	if err := m.reloadAndVerify(ctx, version); err != nil {
		if !serving && m.startFailed() {
			// Nothing was serving, and the new master is gone: keep the
			// files and report; the next Apply starts nginx again.
			return ApplyResult{}, err
		}
		m.restore(last)
		if rerr := m.signal(syscall.SIGHUP); rerr != nil {
			m.opts.Log.Error("reload after rollback failed", "err", rerr)
		}
		return ApplyResult{}, err
	}
	m.version = version
	res.Reloaded, res.Duration = true, time.Since(start)
	if err := m.files.prune(); err != nil {
		m.opts.Log.Warn("removing unused files", "err", err)
	}
	return res, nil
}

// Test checks files with nginx -t without making them live: they are
// written, tested, and the live files are put back whatever the outcome.
// A refusal is a *ConfigError. The controller uses it to find which object
// nginx refuses when nginx's message names none.
func (m *Manager) Test(ctx context.Context, files render.Files) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	files = m.withStatic(files)
	last := m.files.files
	defer m.restore(last)
	if _, err := m.files.write(files); err != nil {
		return err
	}
	_, err := m.test(ctx)
	return err
}

func (m *Manager) withStatic(files render.Files) render.Files {
	if len(m.static) == 0 {
		return files
	}
	files = maps.Clone(files)
	maps.Copy(files, m.static)
	return files
}

// SetStatic sets files, by path relative to the state directory, that are
// written with every configuration from the next Apply on and healed like
// it: the Lua modules, known only once the Lua probe ran in the prepared
// state directory.
func (m *Manager) SetStatic(files render.Files) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.static = files
}

// SetBeforeOpen sets fn to run before each start and reload of nginx,
// which open its log files by name again: the metrics log rotates there.
func (m *Manager) SetBeforeOpen(fn func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.beforeOpen = fn
}

// Health reports why the state directory cannot be kept as written, or
// what nginx's workers cannot reach; nil when all is well. The controller
// is not ready while it is not nil.
func (m *Manager) Health() error {
	if p := m.health.Load(); p != nil {
		return *p
	}
	return nil
}

// heal checks the state directory against what was last written and puts
// back whatever is missing or different: directories with their modes and
// owners, the default certificate, and every managed file. Files are
// compared with the disk, not only with memory, so a deleted or damaged
// state directory recovers without a restart. Callers hold mu.
func (m *Manager) heal() error {
	err := m.access.prepareDirs(m.opts.StateDir)
	if err == nil {
		err = ensureDefaultCert(m.opts.StateDir, time.Now(), m.access.worker)
	}
	if err == nil {
		var healed []string
		healed, err = m.files.repair()
		if len(healed) > 0 {
			m.opts.Log.Warn("state directory differed from what was written; repaired", "files", healed)
		}
	}
	if err == nil {
		err = m.access.checkWorkerAccess(m.opts.StateDir, m.files.secretNames())
	}
	prev := m.Health()
	if err != nil && (prev == nil || prev.Error() != err.Error()) {
		m.opts.Log.Error("the state directory is not usable; not ready until it is", "err", err)
	} else if err == nil && prev != nil {
		m.opts.Log.Info("the state directory is usable again")
	}
	if err == nil {
		m.health.Store(nil)
	} else {
		m.health.Store(&err)
	}
	return err
}

// secretFiles and configFiles split changed file names.
func secretFiles(names []string) []string {
	var out []string
	for _, n := range names {
		// Certificates for backends, DH parameters and session ticket
		// keys are read at reload only; the version covers their content, so a change reloads.
		// Password and API key files are no certificates: read per
		// request, they change without a reload or a probe. Nor are OCSP
		// responses, read beside their certificate.
		if strings.HasPrefix(n, layout.SecretsDir+"/") && !layout.IsProxySecretFile(n) && !layout.IsDHParamFile(n) && !layout.IsAuthFile(n) &&
			!layout.IsTicketKeyFile(n) && !layout.IsOCSPFile(n) {
			out = append(out, n)
		}
	}
	return out
}

func configFiles(names []string) []string {
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, layout.SecretsDir+"/") {
			out = append(out, n)
		}
	}
	return out
}

// probeCertificates asks nginx to load each new or changed certificate
// through a throw-away configuration. nginx -t on the real configuration
// cannot do it: certificate paths there hold a variable and are read only
// at handshake time. A refusal names the file, which is how the controller
// finds the secret at fault.
func (m *Manager) probeCertificates(ctx context.Context, secrets []string) error {
	if len(secrets) == 0 {
		return nil
	}
	probe := render.Probe{Dir: m.opts.StateDir.Path("tmp", "probe"), Check: render.ProbeCertificates}
	for _, rel := range secrets {
		probe.Certificates = append(probe.Certificates, m.opts.StateDir.Path(rel))
	}
	err := runProbe(ctx, m.opts.Binary, probe)
	if ce := (*ConfigError)(nil); err != nil && !errors.As(err, &ce) {
		return fmt.Errorf("certificate probe: %w", err)
	}
	return err
}

// restore puts the last good files back.
func (m *Manager) restore(last render.Files) {
	if _, err := m.files.sync(last); err != nil {
		m.opts.Log.Error("restoring the last good configuration failed", "err", err)
	}
}

// test runs nginx -t on the files on disk.
func (m *Manager) test(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, m.opts.Binary, m.args("-t", "-q")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	msg := strings.TrimSpace(out.String())
	if err != nil {
		if msg == "" {
			msg = err.Error()
		}
		return msg, &ConfigError{Output: msg}
	}
	return msg, nil
}

func (m *Manager) args(extra ...string) []string {
	return append([]string{"-p", string(m.opts.StateDir) + "/", "-e", "stderr", "-c", m.opts.StateDir.MainConf()}, extra...)
}

// reloadAndVerify starts nginx if it is not running, else sends SIGHUP
// (what "nginx -s reload" does, without re-reading the pid file), then polls
// the status socket until the new version answers. A master that logs an
// [emerg] or [alert] meanwhile has most likely refused the files and kept
// the old ones: nginx -t then says why, as a *ConfigError.
func (m *Manager) reloadAndVerify(ctx context.Context, version string) error {
	if m.proc == nil {
		// The master's pid is not known before it may log: watch every
		// process's complaints, as nothing else runs yet.
		complaints := m.logs.tap.watch(anyPID)
		defer m.logs.tap.stop()
		if err := m.start(); err != nil {
			return err
		}
		return m.waitVersion(ctx, version, m.opts.VerifyTimeout, complaints)
	}
	if m.beforeOpen != nil {
		m.beforeOpen()
	}
	complaints := m.logs.tap.watch(m.proc.Pid)
	defer m.logs.tap.stop()
	if err := m.signal(syscall.SIGHUP); err != nil {
		return err
	}
	return m.waitVersion(ctx, version, m.opts.VerifyTimeout, complaints)
}

// waitVersion polls until the workers report version. When the watched
// master complains (w; nil watches nothing), nginx -t checks the files on
// disk: a refusal is returned at once. A refusal nginx -t cannot see, an
// address the master could not bind, is returned once the master gives up
// on it. Otherwise the complaint was about something else, and the wait
// goes on.
func (m *Manager) waitVersion(ctx context.Context, version string, timeout time.Duration, w *complaints) error {
	deadline := time.Now().Add(timeout)
	var last string
	var lastErr error
	var first, more <-chan struct{}
	if w != nil {
		first = w.first
	}
	for {
		v, err := m.queryVersion(ctx)
		if err == nil && v == version {
			return nil
		}
		last, lastErr = v, err
		if time.Now().After(deadline) {
			if more != nil {
				msg, _ := w.bindRefusal()
				return &ConfigError{Output: msg}
			}
			if lastErr != nil {
				return fmt.Errorf("nginx did not report configuration %s within %s: %w", version, timeout, lastErr)
			}
			return fmt.Errorf("nginx did not report configuration %s within %s (workers still report %q)", version, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.exited:
			if w != nil {
				// A master that cannot bind at its start exits; its last
				// lines may still be on their way.
				w.awaitGaveUp(200 * time.Millisecond)
				if msg, _ := w.bindRefusal(); msg != "" {
					return &ConfigError{Output: msg}
				}
			}
			return errors.New("nginx exited while reloading")
		case <-first:
			first = nil
			out, err := m.test(ctx)
			if err != nil {
				return err
			}
			if msg, gaveUp := w.bindRefusal(); msg != "" {
				if gaveUp {
					return &ConfigError{Output: msg}
				}
				more = w.more
				continue
			}
			m.opts.Log.Warn("nginx complained during a reload, but nginx -t accepts the files; still waiting for the new workers", "output", out)
		case <-more:
			if msg, gaveUp := w.bindRefusal(); gaveUp {
				return &ConfigError{Output: msg}
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (m *Manager) queryVersion(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://causeway/causeway/config-version", nil)
	if err != nil {
		return "", err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
