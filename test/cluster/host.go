package cluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The host side of the node: what the cluster changes on this machine
// outside its directory, how Down undoes it and how Leftovers finds what
// was not undone. Everything is found by name (layout.go) or by the
// cluster's directory in a process's command line or a mount's path, so
// that a crashed run is cleaned up by the next one.

// sysctls the node needs: Pods' traffic is routed by the host, and
// traffic bridged between two Pods of the bridge must pass iptables so
// that kube-proxy's DNAT is undone on the way back.
var sysctls = map[string]string{
	"net/ipv4/ip_forward":                 "1",
	"net/bridge/bridge-nf-call-iptables":  "1",
	"net/bridge/bridge-nf-call-ip6tables": "1",
}

// setUpHost makes the node's interface and sets its sysctls, returning
// the sysctls' previous values for Down to restore.
func setUpHost() (map[string]string, error) {
	// A /24 on an interface of its own: NodeIP, and LoadBalancer
	// addresses (lb.go) routed nowhere but here, so nothing sent to them
	// leaves the machine. A bridge without ports stands in for a dummy
	// interface, which this kernel may not have.
	if err := run("ip", "link", "add", NodeInterface, "type", "bridge"); err != nil {
		return nil, err
	}
	if err := run("ip", "addr", "add", NodeIP+"/24", "dev", NodeInterface); err != nil {
		return nil, err
	}
	if err := run("ip", "link", "set", NodeInterface, "up"); err != nil {
		return nil, err
	}
	// The kubelet's --cgroup-root must exist in every hierarchy; a new
	// cpuset starts with no CPU and no memory node.
	for _, h := range cgroupHierarchies() {
		d := filepath.Join(h, CgroupRoot)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("cgroup %s: %w", d, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if v, err := os.ReadFile(filepath.Join(h, f)); err == nil {
				if err := os.WriteFile(filepath.Join(d, f), v, 0o644); err != nil {
					return nil, fmt.Errorf("cgroup %s: %w", filepath.Join(d, f), err)
				}
			}
		}
	}
	old := map[string]string{}
	for k, v := range sysctls {
		p := filepath.Join("/proc/sys", k)
		cur, err := os.ReadFile(p)
		if err != nil {
			return old, fmt.Errorf("sysctl %s: %w", k, err)
		}
		old[k] = strings.TrimSpace(string(cur))
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			return old, fmt.Errorf("sysctl %s=%s: %w", k, v, err)
		}
	}
	return old, nil
}

// restoreSysctls writes back what setUpHost found.
func restoreSysctls(old map[string]string) error {
	var errs []error
	for k, v := range old {
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore sysctl %s=%s: %w", k, v, err))
		}
	}
	return errors.Join(errs...)
}

// sweep removes everything of the cluster from the host, whatever state
// it was left in: processes, containers, mounts, network namespaces,
// cgroups, interfaces, iptables rules and files outside dir. It is
// idempotent, and Leftovers says what it could not remove.
func sweep(dir, kubeProxy string) error {
	var errs []error
	// Processes first, so nothing re-creates what follows.
	for range 5 {
		n := killProcesses(dir)
		if n == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	errs = append(errs, unmountUnder(dir))
	errs = append(errs, removeNetns(dir))
	errs = append(errs, removeCgroups())
	if _, err := os.Stat(kubeProxy); err == nil {
		// kube-proxy knows its own rules best; the generic sweep below
		// takes what it leaves.
		_ = exec.Command(kubeProxy, "--cleanup", "--v=0").Run()
	}
	errs = append(errs, removeChains("iptables"), removeChains("ip6tables"))
	for _, link := range []string{PodBridge, NodeInterface} {
		if linkExists(link) {
			errs = append(errs, run("ip", "link", "del", link))
		}
	}
	errs = append(errs, removeOwnFiles(dir))
	return errors.Join(errs...)
}

// Leftovers lists what of a cluster in dir is still on the host. After
// Down it must be empty.
func Leftovers(dir string) []string {
	var left []string
	for _, pid := range ownProcesses(dir) {
		left = append(left, fmt.Sprintf("process %d: %s", pid, cmdline(pid)))
	}
	for _, pid := range cgroupProcesses() {
		left = append(left, fmt.Sprintf("process %d in %s: %s", pid, CgroupRoot, cmdline(pid)))
	}
	mounts, _ := mountsUnder(dir)
	for _, m := range mounts {
		left = append(left, "mount "+m)
	}
	for _, c := range cgroupDirs() {
		left = append(left, "cgroup "+c)
	}
	for _, link := range []string{PodBridge, NodeInterface} {
		if linkExists(link) {
			left = append(left, "interface "+link)
		}
	}
	for _, prog := range []string{"iptables", "ip6tables"} {
		for _, c := range ownChains(prog) {
			left = append(left, prog+" chain "+c)
		}
	}
	for _, f := range ownFiles(dir) {
		left = append(left, "file "+f)
	}
	if _, err := os.Stat(dir); err == nil {
		left = append(left, "directory "+dir)
	}
	return left
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}

// cmdline is a process's command line with spaces between arguments.
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// ownProcesses are the processes whose command line names dir: the node's
// components and containerd's shims (whose -address is the socket in
// dir). The caller's own process is never one.
func ownProcesses(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, arg := range bytes.Split(b, []byte{0}) {
			if a := string(arg); a == dir || strings.Contains(a, dir+"/") {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// cgroupHierarchies are the mounted cgroup hierarchies (v1 controllers and
// the unified v2 one of a hybrid host).
func cgroupHierarchies() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var roots []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 0 || sep+1 >= len(fields) || len(fields) < 5 {
			continue
		}
		if fs := fields[sep+1]; fs == "cgroup" || fs == "cgroup2" {
			roots = append(roots, fields[4])
		}
	}
	return roots
}

// cgroupDirs are the cgroups at and below CgroupRoot, deepest first.
func cgroupDirs() []string {
	var dirs []string
	for _, h := range cgroupHierarchies() {
		filepath.WalkDir(filepath.Join(h, CgroupRoot), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	return dirs
}

// cgroupProcesses are the processes in the cluster's cgroups: its
// containers.
func cgroupProcesses() []int {
	seen := map[int]bool{}
	var pids []int
	for _, d := range cgroupDirs() {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
				seen[pid] = true
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// killProcesses sends SIGKILL to the cluster's processes and containers
// and returns how many it signalled.
func killProcesses(dir string) int {
	pids := append(ownProcesses(dir), cgroupProcesses()...)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return len(pids)
}

func removeCgroups() error {
	var errs []error
	for _, d := range cgroupDirs() {
		if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// mountsUnder lists the mount points at or below dir, deepest first.
func mountsUnder(dir string) ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var mounts []string
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			mounts = append(mounts, mp)
		}
	}
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	return slices.Compact(mounts), nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unmountUnder(dir string) error {
	var errs []error
	for range 3 {
		mounts, err := mountsUnder(dir)
		if err != nil || len(mounts) == 0 {
			return err
		}
		errs = errs[:0]
		for _, m := range mounts {
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ownNetns are the network namespaces containerd mounted for the
// cluster's sandboxes: those recorded in dir as the cluster's (state.go
// records every name that appeared while it ran).
func ownNetns(dir string) []string {
	st, err := readState(paths{dir})
	if err != nil {
		return nil
	}
	var own []string
	for _, n := range st.netnsNow() {
		if !slices.Contains(st.NetnsBefore, n) {
			own = append(own, n)
		}
	}
	return own
}

func removeNetns(dir string) error {
	var errs []error
	for _, n := range ownNetns(dir) {
		p := filepath.Join(netnsDir, n)
		_ = syscall.Unmount(p, syscall.MNT_DETACH)
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ownFiles are the files outside dir that the cluster's components made:
// network namespaces, shim sockets, CNI result caches and log links.
func ownFiles(dir string) []string {
	var files []string
	for _, n := range ownNetns(dir) {
		files = append(files, filepath.Join(netnsDir, n))
	}
	if st, err := readState(paths{dir}); err == nil {
		for _, s := range listDir(shimSocketDir) {
			if !slices.Contains(st.ShimSocketsBefore, s) {
				files = append(files, filepath.Join(shimSocketDir, s))
			}
		}
	}
	for _, f := range listDir(cniResultsDir) {
		if strings.HasPrefix(f, NetworkName+"-") {
			files = append(files, filepath.Join(cniResultsDir, f))
		}
	}
	for _, f := range listDir(containerLogLinks) {
		p := filepath.Join(containerLogLinks, f)
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, dir+"/") {
			files = append(files, p)
		}
	}
	return files
}

func removeOwnFiles(dir string) error {
	var errs []error
	for _, f := range ownFiles(dir) {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func listDir(dir string) []string {
	entries, _ := os.ReadDir(dir)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// ownChainPrefixes name the chains of kube-proxy and the kubelet (KUBE-)
// and of the CNI plugins (CNI-).
var ownChainPrefixes = []string{"KUBE-", "CNI-"}

func isOwnChain(name string) bool {
	for _, p := range ownChainPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ownChains lists table/chain of every chain of ours in prog's rules.
func ownChains(prog string) []string {
	out, err := exec.Command(prog + "-save").Output()
	if err != nil {
		return nil
	}
	var chains []string
	table := ""
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "*"):
			table = line[1:]
		case strings.HasPrefix(line, ":"):
			if name := strings.Fields(line[1:])[0]; isOwnChain(name) {
				chains = append(chains, table+"/"+name)
			}
		}
	}
	return chains
}

// removeChains deletes our chains and every rule that jumps to them, in
// one iptables-restore transaction per family, leaving every other rule
// of the host as it was.
func removeChains(prog string) error {
	out, err := exec.Command(prog + "-save").Output()
	if err != nil {
		if _, lookErr := exec.LookPath(prog + "-save"); lookErr != nil {
			return nil
		}
		return fmt.Errorf("%s-save: %w", prog, err)
	}
	script := chainRemoval(string(out), isOwnChain)
	if script == "" {
		return nil
	}
	cmd := exec.Command(prog+"-restore", "--noflush")
	cmd.Stdin = strings.NewReader(script)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s-restore: %w: %s", prog, err, bytes.TrimSpace(b))
	}
	return nil
}

// chainRemoval turns iptables-save output into the iptables-restore
// --noflush input that deletes the chains own picks: first the rules of
// other chains that jump to them, then their rules, then the chains.
func chainRemoval(save string, own func(chain string) bool) string {
	var script strings.Builder
	var table string
	var jumps, chains []string
	flush := func() {
		if table == "" || (len(jumps) == 0 && len(chains) == 0) {
			return
		}
		fmt.Fprintf(&script, "*%s\n", table)
		for _, j := range jumps {
			script.WriteString(j + "\n")
		}
		for _, c := range chains {
			fmt.Fprintf(&script, "-F %s\n", c)
		}
		for _, c := range chains {
			fmt.Fprintf(&script, "-X %s\n", c)
		}
		script.WriteString("COMMIT\n")
	}
	for _, line := range strings.Split(save, "\n") {
		switch {
		case strings.HasPrefix(line, "*"):
			flush()
			table, jumps, chains = line[1:], nil, nil
		case strings.HasPrefix(line, ":"):
			if name := strings.Fields(line[1:])[0]; own(name) {
				chains = append(chains, name)
			}
		case strings.HasPrefix(line, "-A "):
			f := strings.Fields(line)
			if len(f) < 2 || own(f[1]) {
				continue // flushed with its chain
			}
			for i := 2; i+1 < len(f); i++ {
				if (f[i] == "-j" || f[i] == "-g") && own(f[i+1]) {
					jumps = append(jumps, "-D "+strings.TrimPrefix(line, "-A "))
					break
				}
			}
		}
	}
	flush()
	return script.String()
}
