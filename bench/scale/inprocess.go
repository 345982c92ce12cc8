package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/source"
)

// inProcess times the controller's own part of one change without an API
// server or nginx: the same objects as a snapshot, then per round one
// Ingress's host changed and the model built and rendered again, as a
// sync does. It prints a table of medians.
func inProcess(n, shapes, annots, rounds int, cpuProfile string) error {
	if cpuProfile != "" {
		// Finer than the default (512 KiB), for the peaks' heap profiles.
		runtime.MemProfileRate = 16 << 10
	}
	snap, opts := memorySnapshot(n, shapes, annots)
	// The controller's metrics collector, which holds each render's
	// series keys and lends them to the next (Params.KnownSeries).
	requests, err := metrics.NewRequests(metrics.RequestOptions{TimeBuckets: metrics.DefaultTimeBuckets,
		LengthBuckets: metrics.DefaultLengthBuckets, SizeBuckets: metrics.DefaultSizeBuckets, PerHost: true}, nil)
	if err != nil {
		return err
	}
	params := render.Params{StateDir: layout.Dir(os.TempDir()), HTTPPort: 80, HTTPSPort: 443,
		Dynamic: &render.Dynamic{Modules: []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"}},
		Metrics: &render.Metrics{Histograms: requests.Histograms(), PerHost: true}, KnownSeries: requests.KnownSeries}
	var memo render.Memo
	var builds, renders, hits []time.Duration
	var buildAlloc, renderAlloc []uint64
	var size int
	var ms runtime.MemStats
	allocated := func() uint64 {
		runtime.ReadMemStats(&ms)
		return ms.TotalAlloc
	}
	for r := range rounds + 1 {
		if r == 1 && cpuProfile != "" {
			f, err := os.Create(cpuProfile)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
			defer writeAllocs(cpuProfile + ".allocs")
		}
		ing := ingress(namespace, 0, shapes, annots)
		ing.Spec.Rules[0].Host = fmt.Sprintf("changed-%d.bench.test", r)
		snap.Ingresses[0] = ing
		a0, start := allocated(), time.Now()
		m, _ := build.Build(snap, opts)
		a1, built := allocated(), time.Now()
		out, err := memo.Render(m, params) // a miss: a host changed
		if err != nil {
			return err
		}
		if !out.Memoized {
			requests.SetSeries(out.Series, 0)
		}
		a2, rendered := allocated(), time.Now()
		// Then an endpoint change: the memo's digest, and no render.
		slice := endpointSlice(namespace, n-1, "192.0.2.10", 8080+r)
		snap.EndpointSlices[n-1] = slice
		m2, _ := build.Build(snap, opts)
		hitStart := time.Now()
		again, err := memo.Render(m2, params)
		if err != nil {
			return err
		}
		hit := time.Since(hitStart)
		if again.Version != out.Version {
			return fmt.Errorf("an endpoint change rendered a new version")
		}
		if r == 0 {
			for _, f := range out.Files {
				size += len(f)
			}
			continue // warm-up
		}
		builds, renders, hits = append(builds, built.Sub(start)), append(renders, rendered.Sub(built)), append(hits, hit)
		buildAlloc, renderAlloc = append(buildAlloc, a1-a0), append(renderAlloc, a2-a1)
	}
	// One more round, untimed, with the collector running back to back
	// beside it: the live heap at the build's and the render's peaks,
	// which set the collector's goal and so the controller's RSS (issue
	// 35 §4). At rest: the objects, and the memo's last output.
	snap.Ingresses[0] = ingress(namespace, 0, shapes, annots)
	rest := liveHeap()
	var m *model.Model
	buildPeak := livePeak(cpuProfile, "build", func() { m, _ = build.Build(snap, opts) })
	afterBuild := liveHeap()
	renderPeak := livePeak(cpuProfile, "render", func() {
		var out *render.Output
		if out, err = memo.Render(m, params); err == nil && !out.Memoized {
			requests.SetSeries(out.Series, 0)
		}
	})
	if err != nil {
		return err
	}
	runtime.KeepAlive(snap) // live through the render, as an informer's objects are
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	fmt.Printf("In process: %d Ingresses in %d layouts, %d annotations each; one host changed per round, median of %d rounds\n\n", n, shapes, annots, rounds)
	fmt.Println("| step | median | max | allocated |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| model build | %s | %s | %s |\n", median(builds).Round(time.Millisecond), slices.Max(builds).Round(time.Millisecond), mib(int64(slices.Max(buildAlloc))))
	fmt.Printf("| render (%.1f MiB of files), through the memo: digest and render | %s | %s | %s |\n", float64(size)/(1<<20), median(renders).Round(time.Millisecond), slices.Max(renders).Round(time.Millisecond), mib(int64(slices.Max(renderAlloc))))
	fmt.Printf("| an endpoint change after it: the memo's digest, no render | %s | %s | |\n", median(hits).Round(time.Millisecond), slices.Max(hits).Round(time.Millisecond))
	fmt.Printf("\nLive heap (after a collection; the peaks with collections back to back): at rest %s, the build's peak %s, the model built %s, the render's peak %s\n",
		mib(int64(rest)), mib(int64(buildPeak)), mib(int64(afterBuild)), mib(int64(renderPeak)))
	return nil
}

// liveHeap is the heap live after a collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// livePeak runs f while another goroutine collects garbage back to back,
// and returns the largest heap live after one of those collections: what
// f holds at its peak, with what was live before. With profile set, the
// heap profile at that peak goes to profile.heap-peak-NAME (go tool pprof
// -sample_index=inuse_space: what is live then, by where it was made).
func livePeak(profile, name string, f func()) uint64 {
	done, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var most uint64
		var at bytes.Buffer
		for {
			if live := liveHeap(); live > most {
				most = live
				if profile != "" {
					// As of the collection just made: the profile of this peak.
					at.Reset()
					pprof.Lookup("heap").WriteTo(&at, 0)
				}
			}
			select {
			case <-done:
				if at.Len() > 0 {
					os.WriteFile(profile+".heap-peak-"+name, at.Bytes(), 0o644)
				}
				peak <- most
				return
			default:
			}
		}
	}()
	f()
	close(done)
	return <-peak
}

// writeAllocs writes the allocation profile (go tool pprof
// -sample_index=alloc_space) next to the CPU profile.
func writeAllocs(path string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	pprof.Lookup("allocs").WriteTo(f, 0)
}

// memorySnapshot is the benchmark's objects as a snapshot in memory, and
// the build options of the controller the benchmark runs.
func memorySnapshot(n, shapes, annots int) (*source.Snapshot, build.Options) {
	snap := &source.Snapshot{}
	for i := range n {
		snap.Ingresses = append(snap.Ingresses, ingress(namespace, i, shapes, annots))
		snap.Services = append(snap.Services, service(namespace, i))
		snap.EndpointSlices = append(snap.EndpointSlices, endpointSlice(namespace, i, "192.0.2.10", 8080))
	}
	opts := build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"},
		AnnotationsPrefix: "nginx.ingress.kubernetes.io", LuaAvailable: true}
	return snap, opts
}
