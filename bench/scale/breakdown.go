package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	osuser "os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/causeway/causeway/bench/internal/proc"
	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/flavour"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/runtime"
)

// breakdown times each step of one changed Ingress on its own, with the
// controller's own code but no API server: the objects are made in memory
// (as -in-process does), built with build.Run and rendered through
// render.Memo as a sync does, and made live by a runtime.Manager on real
// nginx, which writes the files and reloads as the controller's does.
// Per change it times the build, the render, writing the files, `nginx
// -t` on the new files (which a reload does not run: the master parses
// them itself), and the reload, from SIGHUP to the new workers reporting
// the new version and answering for the changed host. It also samples
// nginx's memory (master and every worker, old ones included) across the
// reload.
func breakdown(n, shapes, annots, changes int, keep bool, plane dataPlane) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "causeway-breakdown-")
	if err != nil {
		return err
	}
	if keep {
		defer fmt.Fprintln(os.Stderr, "breakdown: state directory kept:", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	os.Chmod(tmp, 0o755) // nginx workers read the state directory
	dir := layout.Dir(filepath.Join(tmp, "state"))
	bin := plane.nginx()
	modulesDir := plane.modulesDir
	if modulesDir == "" {
		modulesDir = "/usr/lib/nginx/modules"
	}
	user := ""
	if os.Geteuid() == 0 { // as cmd/causeway's workerUser
		user = "nobody"
		if _, err := osuser.Lookup("www-data"); err == nil {
			user = "www-data"
		}
	}
	mgr, err := runtime.NewManager(runtime.Options{Binary: bin, StateDir: dir, WorkerUser: user,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), VerifyTimeout: 5 * time.Minute, Output: io.Discard})
	if err != nil {
		return err
	}
	defer mgr.Stop(context.Background())
	flav, err := flavour.Detect(ctx, bin)
	if err != nil {
		return err
	}
	mods, err := runtime.DetectLua(ctx, bin, modulesDir, plane.luaPackagePath, dir)
	if err != nil {
		return err
	}
	lua, err := luaModules()
	if err != nil {
		return err
	}
	mgr.SetStatic(lua)
	httpPort, err := freePort("127.0.0.1")
	if err != nil {
		return err
	}
	httpsPort, err := freePort("127.0.0.1")
	if err != nil {
		return err
	}
	var hists []string
	for _, h := range balancer.Histograms {
		hists = append(hists, h.Name)
	}
	params := render.Params{StateDir: dir, ListenAddress: "127.0.0.1", HTTPPort: httpPort, HTTPSPort: httpsPort, User: user, Flavour: flav,
		OpenFilesLimit: runtime.OpenFilesLimit(),
		Dynamic:        &render.Dynamic{Modules: mods, LuaPackagePath: plane.luaPackagePath},
		Metrics:        &render.Metrics{Histograms: hists, PerHost: true}}

	snap, opts := memorySnapshot(n, shapes, annots)
	var memo render.Memo
	// sync is the controller's build and render (Controller.build).
	sync := func() (*render.Output, time.Duration, time.Duration, error) {
		start := time.Now()
		r := build.Run(snap, opts)
		built := time.Now()
		out, err := memo.Render(r.Model, params)
		if err != nil {
			return nil, 0, 0, err
		}
		maps.Copy(out.Files, runtime.SecretFiles(r.Model))
		return out, built.Sub(start), time.Since(built), nil
	}

	fmt.Fprintf(os.Stderr, "breakdown: %d Ingresses in %d layouts: start ...\n", n, shapes)
	out, b0, r0, err := sync()
	if err != nil {
		return err
	}
	applied, err := mgr.Apply(ctx, out.Files, out.Version)
	if err != nil {
		return err
	}
	size := 0
	for _, f := range out.Files {
		size += len(f)
	}
	start := stepTimes{build: b0, render: r0, write: applied.Write, reload: applied.Duration - applied.Write}
	before := nginxMemory(string(dir))

	client := &http.Client{Timeout: 5 * time.Second}
	var rounds []stepTimes
	var rssPeak, pssPeak int64
	for r := range changes {
		changed := fmt.Sprintf("changed-%d.bench.test", r)
		ing := ingress(namespace, 0, shapes, annots)
		ing.Spec.Rules[0].Host = changed
		snap.Ingresses[0] = ing
		out, b, rd, err := sync()
		if err != nil {
			return err
		}
		stop := sampleRSS(string(dir))
		cpu0 := cpuTime(mgr.MasterPID())
		applied, err := mgr.Apply(ctx, out.Files, out.Version)
		masterCPU := cpuTime(mgr.MasterPID()) - cpu0
		if err != nil {
			stop()
			return err
		}
		// The version answered on the status socket; now the host, by
		// traffic (an answer other than the default server's 404: its
		// backend has no endpoints pushed, so 503).
		verified := time.Now()
		for {
			if code := get(client, httpPort, changed); code != 0 && code != http.StatusNotFound {
				break
			}
			if time.Since(verified) > time.Minute {
				stop()
				return fmt.Errorf("%s never answered", changed)
			}
			time.Sleep(5 * time.Millisecond)
		}
		answered := time.Since(verified)
		// Old workers finish their connections and exit; keep sampling a
		// little so the peak sees them all.
		time.Sleep(500 * time.Millisecond)
		peak := stop()
		rssPeak, pssPeak = max(rssPeak, peak.rss), max(pssPeak, peak.pss)
		test, _, err := nginxTest(ctx, string(dir), plane)
		if err != nil {
			return err
		}
		padded, _, err := nginxTestEnv(ctx, string(dir), plane, []string{topPadTunable})
		if err != nil {
			return err
		}
		st := stepTimes{build: b, render: rd, write: applied.Write, test: test, padded: padded, reload: applied.Duration - applied.Write + answered,
			master: masterCPU, files: len(applied.Changed)}
		fmt.Fprintf(os.Stderr, "breakdown: change %d: %+v\n", r+1, st)
		rounds = append(rounds, st)
	}
	after := nginxMemory(string(dir))

	fmt.Printf("Breakdown: %d Ingresses in %d layouts, %s; nginx %s, %d rendered files (%.1f MiB); median of %d changes (one Ingress's host)\n\n",
		n, shapes, annotationsNote(annots), flav.String(), len(out.Files), float64(size)/(1<<20), changes)
	fmt.Println("| step | start (first Apply) | one change: median | max |")
	fmt.Println("|---|---|---|---|")
	row := func(name string, first time.Duration, pick func(stepTimes) time.Duration) {
		var ds []time.Duration
		for _, s := range rounds {
			ds = append(ds, pick(s))
		}
		slices.Sort(ds)
		f := "-"
		if first > 0 {
			f = first.Round(time.Millisecond).String()
		}
		fmt.Printf("| %s | %s | %s | %s |\n", name, f, ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
	}
	row("model build (build.Run)", start.build, func(s stepTimes) time.Duration { return s.build })
	row("render (render.Memo)", start.render, func(s stepTimes) time.Duration { return s.render })
	row("write the changed files (runtime.Manager)", start.write, func(s stepTimes) time.Duration { return s.write })
	row("`nginx -t` on the new files (not run by a reload)", 0, func(s stepTimes) time.Duration { return s.test })
	row(fmt.Sprintf("`nginx -t` again, glibc keeping 16 MiB at its heap's top (%d `map` blocks)", mapBlocks(out.Files)), 0,
		func(s stepTimes) time.Duration { return s.padded })
	row("start / reload: SIGHUP → new workers answer for the changed host", start.reload, func(s stepTimes) time.Duration { return s.reload })
	row("of which the master's CPU time (parsing the files)", 0, func(s stepTimes) time.Duration { return s.master })
	row("total without `nginx -t`", start.build+start.render+start.write+start.reload, func(s stepTimes) time.Duration {
		return s.build + s.render + s.write + s.reload
	})
	fmt.Printf("\nfiles written per change: %d. nginx memory, master + workers (old ones included), RSS added up (shared pages counted in each process) / PSS (shared pages divided among them): %s / %s before the changes, %s / %s at the peak across the reloads, %s / %s after\n",
		rounds[len(rounds)/2].files, mib(before.rss), mib(before.pss), mib(rssPeak), mib(pssPeak), mib(after.rss), mib(after.pss))
	return nil
}

type stepTimes struct {
	build, render, write, test, reload time.Duration
	// padded is nginx -t with topPadTunable.
	padded time.Duration
	master time.Duration
	files  int
}

// topPadTunable keeps 16 MiB at the top of glibc's heap (the Makefile's
// TEST_GLIBC_TUNABLES). nginx parses each map block with about 1.2 MB of
// hash arrays it frees at once, and glibc gives the heap's top back to the
// kernel at each free, so the next map faults its pages in again. The
// difference between the two nginx -t rows is what that costs; the
// image's nginx, which has a file capability, ignores the variable.
const topPadTunable = "GLIBC_TUNABLES=glibc.malloc.top_pad=16777216"

// mapBlockRe matches the first line of a map block.
var mapBlockRe = regexp.MustCompile(`(?m)^\s*map\s`)

// mapBlocks counts the map blocks of the configuration files.
func mapBlocks(files render.Files) int {
	n := 0
	for name, data := range files {
		if strings.HasSuffix(name, ".conf") {
			n += len(mapBlockRe.FindAllIndex(data, -1))
		}
	}
	return n
}

// sampleRSS samples nginxMemory every 20 ms until stop, which returns
// the peaks.
func sampleRSS(stateDir string) (stop func() nginxMem) {
	var peak nginxMem
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			m := nginxMemory(stateDir)
			peak.rss, peak.pss = max(peak.rss, m.rss), max(peak.pss, m.pss)
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	return func() nginxMem {
		close(done)
		wg.Wait()
		return peak
	}
}

func get(c *http.Client, port int, host string) int {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/", port), nil)
	if err != nil {
		return 0
	}
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// luaModules are the balancer's Lua files, the controller's static files
// (cmd/causeway's luaFiles).
func luaModules() (render.Files, error) {
	out := render.Files{}
	src := balancer.LuaFS()
	err := fs.WalkDir(src, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, name)
		out[layout.LuaDir+"/"+name] = data
		return err
	})
	return out, err
}

type nginxMem struct{ rss, pss int64 }

// nginxMemory adds up the RSS and the PSS of the nginx master and its
// children, workers old and new.
func nginxMemory(stateDir string) nginxMem {
	data, err := os.ReadFile(filepath.Join(stateDir, "run", "nginx.pid"))
	if err != nil {
		return nginxMem{}
	}
	master, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	var m nginxMem
	for _, pid := range proc.Tree(master) {
		s := proc.SharedOf(pid)
		m.rss, m.pss = m.rss+s.RSS, m.pss+s.PSS
	}
	return m
}

// cpuTime is the user and system CPU time pid has used.
func cpuTime(pid int) time.Duration {
	d, _ := proc.CPU(pid)
	return d
}
