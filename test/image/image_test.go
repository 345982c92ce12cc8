// Package image tests the container image that `make image` writes to
// bin/causeway-image.tar: loaded into Debian's podman and run with the
// files source on a mounted manifest directory, it must serve a request
// to an echo backend on the host's loopback, as uid 101 and with no
// capability beyond NET_BIND_SERVICE. TestImageReproducible builds the
// image twice from scratch and compares digests.
//
// The tests need root, podman and runc (make test-image installs them);
// they skip without them unless CAUSEWAY_REQUIRE_IMAGE=1, as make test
// sets. Containers use the host's network (--network host) and only
// 127.0.0.0/8 addresses.
package image

import (
	"archive/tar"
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/causeway/causeway/test/echo"
	"github.com/causeway/causeway/test/harness"
)

// archivePath is where make image writes the OCI archive.
const archivePath = "../../bin/causeway-image.tar"

// capNetBindService is CAP_NET_BIND_SERVICE's bit in /proc/PID/status.
const capNetBindService = 1 << 10

// require skips the test when the image cannot be run here, or fails it
// when CAUSEWAY_REQUIRE_IMAGE=1 says it must.
func require(t *testing.T, needArchive bool) {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, tool := range []string{"podman", runtime()} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if needArchive {
		if _, err := os.Stat(archivePath); err != nil {
			missing = append(missing, "bin/causeway-image.tar (make image)")
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := "the image tests need " + strings.Join(missing, ", ") + "; run make test-image"
	if os.Getenv("CAUSEWAY_REQUIRE_IMAGE") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// runtime is the OCI runtime podman is told to use. Debian's crun 1.8
// refuses hosts with hybrid cgroups (v1 controllers beside a v2 mount), as
// these machines have; runc runs on both.
func runtime() string {
	if r := os.Getenv("CAUSEWAY_PODMAN_RUNTIME"); r != "" {
		return r
	}
	return "runc"
}

// podman runs podman with args and returns its combined output.
func podman(args ...string) (string, error) {
	out, err := exec.Command("podman", append([]string{"--runtime", runtime()}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("podman %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// archiveInfo is what the OCI archive says about the image in it.
type archiveInfo struct {
	Tag, Manifest, Config string // the tag podman loads it as, and the digests
	Blobs                 int64  // bytes of blobs: the compressed size
}

// readArchive reads index.json and the manifest from an OCI archive.
func readArchive(path string) (archiveInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return archiveInfo{}, err
	}
	defer f.Close()
	files := map[string][]byte{}
	var info archiveInfo
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return archiveInfo{}, fmt.Errorf("read %s: %w", path, err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		if strings.HasPrefix(name, "blobs/sha256/") && h.Typeflag == tar.TypeReg {
			info.Blobs += h.Size
		}
		// Only the small JSON files are kept; layers are skipped.
		if h.Typeflag == tar.TypeReg && h.Size < 1<<20 {
			b, err := io.ReadAll(tr)
			if err != nil {
				return archiveInfo{}, err
			}
			files[name] = b
		}
	}
	var index struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		return archiveInfo{}, fmt.Errorf("%s: index.json: %w", path, err)
	}
	if len(index.Manifests) != 1 {
		return archiveInfo{}, fmt.Errorf("%s: index.json has %d manifests, want 1", path, len(index.Manifests))
	}
	info.Manifest = index.Manifests[0].Digest
	info.Tag = index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]
	var manifest struct {
		Config struct {
			Digest string `json:"digest"`
		} `json:"config"`
	}
	blob := "blobs/sha256/" + strings.TrimPrefix(info.Manifest, "sha256:")
	if err := json.Unmarshal(files[blob], &manifest); err != nil {
		return archiveInfo{}, fmt.Errorf("%s: manifest: %w", path, err)
	}
	info.Config = manifest.Config.Digest
	return info, nil
}

var (
	loadOnce sync.Once
	loaded   archiveInfo
	loadErr  error
	// ours is set when this run loaded the image, so it removes it after.
	ours bool
)

func TestMain(m *testing.M) {
	code := m.Run()
	if ours {
		if _, err := podman("rmi", loaded.Tag); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(code)
}

// loadImage loads bin/causeway-image.tar into podman once and checks that
// the image podman holds under its tag is the archive's.
func loadImage(t *testing.T) archiveInfo {
	t.Helper()
	loadOnce.Do(func() {
		loaded, loadErr = readArchive(archivePath)
		if loadErr != nil {
			return
		}
		if loaded.Tag == "" {
			loadErr = errors.New("the archive's index.json names no tag")
			return
		}
		_, err := podman("image", "exists", loaded.Tag)
		ours = err != nil
		if _, loadErr = podman("load", "-q", "-i", archivePath); loadErr != nil {
			return
		}
		id, err := podman("image", "inspect", "--format", "{{.Id}}", loaded.Tag)
		if err != nil {
			loadErr = err
			return
		}
		if "sha256:"+id != loaded.Config {
			loadErr = fmt.Errorf("podman holds %s as %s, the archive's config is %s", loaded.Tag, id, loaded.Config)
		}
	})
	if loadErr != nil {
		t.Fatalf("load %s: %v", archivePath, loadErr)
	}
	return loaded
}

// backend starts an echo backend on ip and returns its port.
func backend(t *testing.T, ip string) int {
	t.Helper()
	port := harness.FreePort(t, ip)
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: echo.Handler("web", addr), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return port
}

// manifests writes an IngressClass-less Ingress for host, its Service and
// an EndpointSlice for the backend at ip:port, into a new directory.
func manifests(t *testing.T, host, ip string, port int) string {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: web, namespace: image}
spec:
  ports: [{name: http, port: 80, targetPort: %[3]d}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-1
  namespace: image
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
ports: [{name: http, port: %[3]d, protocol: TCP}]
endpoints:
  - addresses: [%[2]s]
    conditions: {ready: true}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: image, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  ingressClassName: causeway
  rules:
    - host: %[1]s
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`, host, ip, port)
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	// The container's user must read them.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// stateDir is a host directory for --state-dir, owned by uid 101 as an
// emptyDir volume is writable by the pod's user.
func stateDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chown(dir, 101, 101); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ulimits are podman options for limits this machine's sandbox lets a
// process set: podman's defaults are above the hard limits it may raise
// them to, and every container fails to start with them.
func ulimits(t *testing.T) []string {
	t.Helper()
	var nofile syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	return []string{"--ulimit", fmt.Sprintf("nofile=%d:%d", nofile.Cur, nofile.Max),
		"--ulimit", "nproc=4096:4096"}
}

// run starts the image detached with the podman options opts and the
// controller's args, and removes the container when the test ends (its
// log is printed if the test failed).
func run(t *testing.T, tag string, opts, args []string) string {
	t.Helper()
	name := fmt.Sprintf("causeway-image-test-%d-%d", os.Getpid(), rand.IntN(1<<30))
	base := append([]string{"run", "-d", "--name", name, "--network", "host"}, ulimits(t)...)
	cmd := append(append(append(base, opts...), tag), args...)
	if _, err := podman(cmd...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := podman("logs", name)
			t.Logf("container log:\n%s", logs)
		}
		if out, err := podman("rm", "-f", "-t", "0", name); err != nil {
			t.Logf("remove %s: %v %s", name, err, out)
		}
	})
	return name
}

// controllerArgs are the container's arguments: the files source on /m,
// nginx on ip with the two traffic ports, health on a free port and
// metrics on metricsPort.
func controllerArgs(t *testing.T, ip string, httpPort, httpsPort, metricsPort int) []string {
	t.Helper()
	return []string{"controller", "--manifests", "/m", "--listen-address", ip,
		"--http-port", strconv.Itoa(httpPort), "--https-port", strconv.Itoa(httpsPort),
		"--health-port", strconv.Itoa(harness.FreePort(t, ip)), "--metrics-port", strconv.Itoa(metricsPort)}
}

// serve waits, bounded, until nginx in the container answers for host at
// addr from the echo backend.
func serve(t *testing.T, addr, host string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		r, err := harness.Get("http", addr, host, "/image")
		if err == nil && r.Status == 200 && r.Reply.Service == "web" && r.Reply.Path == "/image" {
			return
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("status %d, body %.200q", r.Status, r.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no answer from the echo backend through %s within 60s: %s", addr, last)
}

// proc is what /proc/PID/status says about one process of the container.
type proc struct {
	PID                int
	Name               string
	UIDs, GIDs         string // real, effective, saved, filesystem
	Inh, Prm, Eff, Bnd uint64
	Amb                uint64
}

// processes lists the container's processes: its init and every
// descendant, read from the host's /proc.
func processes(t *testing.T, name string) []proc {
	t.Helper()
	out, err := podman("inspect", "--format", "{{.State.Pid}}", name)
	if err != nil {
		t.Fatal(err)
	}
	root, err := strconv.Atoi(out)
	if err != nil || root <= 0 {
		t.Fatalf("container %s has no pid: %q", name, out)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	all := map[int]proc{}
	parent := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, ppid, err := readStatus(pid)
		if err != nil {
			continue // exited meanwhile
		}
		all[pid] = p
		parent[pid] = ppid
	}
	inContainer := func(pid int) bool {
		for i := 0; pid > 1 && i < 64; i++ {
			if pid == root {
				return true
			}
			pid = parent[pid]
		}
		return false
	}
	var ps []proc
	for pid, p := range all {
		if inContainer(pid) {
			ps = append(ps, p)
		}
	}
	return ps
}

func readStatus(pid int) (proc, int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return proc{}, 0, err
	}
	defer f.Close()
	p := proc{PID: pid}
	ppid := 0
	caps := map[string]*uint64{"CapInh": &p.Inh, "CapPrm": &p.Prm, "CapEff": &p.Eff, "CapBnd": &p.Bnd, "CapAmb": &p.Amb}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch key {
		case "Name":
			p.Name = value
		case "PPid":
			ppid, _ = strconv.Atoi(value)
		case "Uid":
			p.UIDs = strings.Join(strings.Fields(value), " ")
		case "Gid":
			p.GIDs = strings.Join(strings.Fields(value), " ")
		default:
			if c, ok := caps[key]; ok {
				*c, err = strconv.ParseUint(value, 16, 64)
				if err != nil {
					return proc{}, 0, fmt.Errorf("/proc/%d/status %s: %w", pid, key, err)
				}
			}
		}
	}
	return p, ppid, sc.Err()
}

// checkProcesses checks that the container runs tini, causeway and an
// nginx master with workers, all as uid and gid 101, and that no set of
// capabilities of any of them holds more than allowed.
func checkProcesses(t *testing.T, name string, allowed uint64) []proc {
	t.Helper()
	ps := processes(t, name)
	names := map[string]int{}
	for _, p := range ps {
		names[p.Name]++
		if p.UIDs != "101 101 101 101" || p.GIDs != "101 101 101 101" {
			t.Errorf("process %d (%s): uids %q gids %q, want 101 for all", p.PID, p.Name, p.UIDs, p.GIDs)
		}
		for set, v := range map[string]uint64{"inheritable": p.Inh, "permitted": p.Prm, "effective": p.Eff, "bounding": p.Bnd, "ambient": p.Amb} {
			if v&^allowed != 0 {
				t.Errorf("process %d (%s): %s capabilities %#x, want at most %#x", p.PID, p.Name, set, v, allowed)
			}
		}
	}
	if names["tini"] != 1 || names["causeway"] != 1 || names["nginx"] < 2 {
		t.Errorf("processes %v, want tini, causeway and an nginx master with workers", names)
	}
	return ps
}

// host is the Ingress's host in every test.
const host = "image.causeway.test"

// start runs the image as deploy/ does (uid and gid 101, no privilege
// escalation, a read-only root with /tmp and the state directory as
// volumes) with the capability options caps and the manifests on /m,
// nginx on ip at the two ports and the echo backend on backendIP. It
// returns the container's name once a request is served through it.
func start(t *testing.T, ip, backendIP string, httpPort, httpsPort int, caps ...string) (name, metricsAddr string) {
	t.Helper()
	require(t, true)
	img := loadImage(t)
	m := manifests(t, host, backendIP, backend(t, backendIP))
	opts := append([]string{"--user", "101:101", "--security-opt", "no-new-privileges",
		"--read-only", "--tmpfs", "/tmp", "-v", stateDir(t) + ":/var/lib/causeway", "-v", m + ":/m:ro"}, caps...)
	metricsPort := harness.FreePort(t, ip)
	name = run(t, img.Tag, opts, controllerArgs(t, ip, httpPort, httpsPort, metricsPort))
	serve(t, net.JoinHostPort(ip, strconv.Itoa(httpPort)), host)
	return name, net.JoinHostPort(ip, strconv.Itoa(metricsPort))
}

// TestImageAsDeployed runs the image with deploy/deployment.yaml's
// security context, every capability dropped and unprivileged ports. It
// must serve with no capability at all, and stop gracefully with status 0
// on SIGTERM.
func TestImageAsDeployed(t *testing.T) {
	const ip = "127.0.0.101"
	name, metricsAddr := start(t, ip, "127.0.0.102", harness.FreePort(t, ip), harness.FreePort(t, ip), "--cap-drop", "all")
	checkProcesses(t, name, 0)
	checkRequestMetrics(t, metricsAddr)

	if out, err := podman("stop", "-t", "30", name); err != nil {
		t.Fatalf("stop: %v %s", err, out)
	}
	code, err := podman("inspect", "--format", "{{.State.ExitCode}}", name)
	if err != nil {
		t.Fatal(err)
	}
	if code != "0" {
		t.Errorf("exit status after SIGTERM %s, want 0", code)
	}
}

// checkRequestMetrics: the requests served so far are counted (nginx, as
// uid 101 on a read-only root, writes the metrics log in the state
// directory, and the controller reads it).
func checkRequestMetrics(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			n, err := harness.SumMetric(string(body), "nginx_ingress_controller_requests", `path="/"`, `status="200"`)
			if err == nil && n >= 1 {
				return
			}
			last = fmt.Sprintf("nginx_ingress_controller_requests = %v, %v", n, err)
		} else {
			last = err.Error()
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Errorf("request metrics: %s", last)
}

// TestImagePrivilegedPorts gives the container NET_BIND_SERVICE, and
// nothing else, and has nginx listen on ports below 1024 as uid 101. podman
// puts an added capability of a non-root user in the ambient set, so it
// reaches nginx without a file capability (docs/install.md says what
// Kubernetes does instead).
func TestImagePrivilegedPorts(t *testing.T) {
	const ip = "127.0.0.103"
	httpPort := privilegedPort(t, ip, 0)
	httpsPort := privilegedPort(t, ip, httpPort)
	name, _ := start(t, ip, "127.0.0.104", httpPort, httpsPort, "--cap-drop", "all", "--cap-add", "NET_BIND_SERVICE")
	r, err := harness.Get("https", net.JoinHostPort(ip, strconv.Itoa(httpsPort)), host, "/image")
	if err != nil || r.Reply.Service != "web" {
		t.Errorf("HTTPS on port %d: %+v, %v; want the echo backend", httpsPort, r, err)
	}
	for _, p := range checkProcesses(t, name, capNetBindService) {
		if p.Name == "nginx" && p.Eff != capNetBindService {
			t.Errorf("nginx %d: effective capabilities %#x, want NET_BIND_SERVICE", p.PID, p.Eff)
		}
	}
}

// privilegedPort returns a port below 1024, other than not, that is free
// on ip and on all addresses.
func privilegedPort(t *testing.T, ip string, not int) int {
	t.Helper()
	for port := 1023; port >= 600; port-- {
		if port == not {
			continue
		}
		a, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			continue
		}
		a.Close()
		return port
	}
	t.Fatalf("no free port in 600-1023 on %s", ip)
	return 0
}

// TestImageCarriesModSecurity: the image holds ModSecurity's module,
// Debian's OWASP Core Rule Set and unicode.mapping, where the controller
// looks for them (--nginx-modules-dir, --modsecurity-crs-dir, render's
// base configuration).
func TestImageCarriesModSecurity(t *testing.T) {
	require(t, true)
	info := loadImage(t)
	for _, p := range []string{
		"/usr/lib/nginx/modules/ngx_http_modsecurity_module.so",
		"/usr/share/modsecurity-crs/rules/REQUEST-942-APPLICATION-ATTACK-SQLI.conf",
		"/usr/share/modsecurity-crs/rules/REQUEST-949-BLOCKING-EVALUATION.conf",
		"/etc/nginx/unicode.mapping",
	} {
		args := append(append([]string{"run", "--rm"}, ulimits(t)...), "--entrypoint", "/usr/bin/test", info.Tag, "-s", p)
		if out, err := podman(args...); err != nil {
			t.Errorf("%s is missing from the image: %v %s", p, err, out)
		}
	}
}
