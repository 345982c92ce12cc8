package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// row is one line of the result table. what may hold {obj} and {objs},
// the kind and its plural (both kinds' in a table of both); num, when
// not 0, is the value the side-by-side table compares.
type row struct {
	what, value string
	// target is the target, met whether it was ("" for no target).
	target string
	met    bool
	num    float64
}

// backend is the echo backend: every EndpointSlice points at ip:port;
// the endpoint changes move one to ip:other.
type backend struct {
	ip          string
	port, other int
}

// measureSet creates set's objects unless its namespace exists, runs the
// controller on them and measures: start → ready and → the last host
// served, status on every object, single-object changes and endpoint
// changes until live, memory, the rendered configuration.
func measureSet(ctx context.Context, o options, set objectSet, client kubernetes.Interface, bin, kubeconfig, stateDir string, b backend) ([]row, error) {
	n, changes := o.n, o.changes
	var rows []row
	_, err := client.CoreV1().Namespaces().Get(ctx, set.namespace(), metav1.GetOptions{})
	fresh := apierrors.IsNotFound(err)
	if fresh {
		fmt.Fprintf(os.Stderr, "creating %s ...\n", set.describe())
		created, err := set.create(ctx, b.ip, b.port)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row{what: fmt.Sprintf("create %d {objs} + Services + EndpointSlices (%d workers)", n, o.workers),
			value: fmt.Sprintf("%s (%.0f objects/s)", created.Round(100*time.Millisecond), float64(3*n)/created.Seconds()), num: created.Seconds()})
	} else if err != nil {
		return nil, err
	} else if err := set.check(ctx); err != nil {
		return nil, err
	}

	c, err := startController(ctx, bin, kubeconfig, stateDir, o.plane, set.controllerArgs())
	if err != nil {
		return nil, err
	}
	defer c.stop()
	// Profiles of the HTTPRoute set are named apart from the Ingresses'.
	phase := func(p string) string {
		if set.kind() == "Ingress" {
			return p
		}
		return strings.ToLower(set.kind()) + "-" + p
	}
	served := make(chan servedResult, 1)
	go func() {
		d, err := c.waitServed(ctx, set, n-1, 20*time.Minute)
		served <- servedResult{d, err}
	}()
	stopProfile := c.profile(o.profile, phase("start"))
	ready, err := c.waitReady(ctx, 10*time.Minute)
	stopProfile()
	if err != nil {
		return nil, err
	}
	last := <-served
	if last.err != nil {
		return nil, last.err
	}
	readyTarget := targetReady
	if o.annotations > 0 {
		readyTarget = targetReadyAnnotated
	}
	rows = append(rows,
		row{what: "controller start → ready (/readyz 200)", value: ready.Round(10 * time.Millisecond).String(),
			target: "≤ " + readyTarget.String(), met: ready <= readyTarget, num: ready.Seconds()},
		row{what: "controller start → the last {obj}'s host served, by traffic", value: last.took.Round(10 * time.Millisecond).String(),
			target: "≤ " + readyTarget.String(), met: last.took <= readyTarget, num: last.took.Seconds()})
	afterReady := c.rss()
	c.heapProfile(o.profile, phase("heap-ready.pprof"))

	statusStart := time.Now()
	if err := set.waitPublished(ctx, 30*time.Minute); err != nil {
		return nil, err
	}
	took := time.Since(statusStart)
	value := took.Round(100 * time.Millisecond).String()
	if !fresh {
		value += " (already published by an earlier run)"
	}
	rows = append(rows, row{what: fmt.Sprintf("ready → status published on all %d {objs}", n), value: value, num: took.Seconds()})
	c.heapProfile(o.profile, phase("heap-published.pprof"))
	// Let the syncs caused by the status writes run out.
	time.Sleep(3 * time.Second)

	stopProfile = c.profile(o.profile, phase("change"))
	var times, apply, reload []time.Duration
	for i := range changes {
		t, err := c.change(ctx, client, set, i, b.ip, b.port)
		if err != nil {
			stopProfile()
			return nil, err
		}
		times = append(times, t.took)
		if t.apply > 0 {
			apply, reload = append(apply, t.apply), append(reload, t.reload)
		}
	}
	stopProfile()
	c.heapProfile(o.profile, phase("heap.pprof"))
	slices.Sort(times)
	worst := times[len(times)-1]
	rows = append(rows, row{what: fmt.Sprintf("one {obj} changed → live, by traffic (median / max of %d)", changes),
		value: medianMax(times), target: "≤ " + targetChange.String(), met: worst <= targetChange, num: times[len(times)/2].Seconds()})
	if len(apply) > 0 {
		// The split of the same changes (those that took one sync).
		var build []time.Duration
		for k := range apply {
			build = append(build, apply[k]-reload[k])
		}
		for _, r := range []struct {
			what string
			ds   []time.Duration
		}{
			{"of which: controller, event → live (causeway_config_apply_seconds)", apply},
			{"of which: the rest of the sync: quiet period, model build, render, endpoint push (event → live minus the reload)", build},
			{"of which: nginx reload, files written → new workers answering (causeway_nginx_last_reload_seconds)", reload},
		} {
			slices.Sort(r.ds)
			rows = append(rows, row{what: fmt.Sprintf("%s (median / max of the changes that took one sync)", r.what),
				value: fmt.Sprintf("%s (%d)", medianMax(r.ds), len(r.ds)), num: r.ds[len(r.ds)/2].Seconds()})
		}
	}

	// Endpoint changes: the Services of the last objects, which the
	// changes above leave alone.
	var epTook, epApply []time.Duration
	epReloads := 0
	stopProfile = c.profile(o.profile, phase("endpoint"))
	for k := range changes {
		t, err := c.endpointChange(ctx, client, set, n-1-k, b.ip, b.port, b.other)
		if err != nil {
			stopProfile()
			return nil, err
		}
		epTook, epReloads = append(epTook, t.took), epReloads+t.reloads
		if t.apply > 0 {
			epApply = append(epApply, t.apply)
		}
	}
	stopProfile()
	slices.Sort(epTook)
	rows = append(rows, row{what: fmt.Sprintf("one EndpointSlice changed → traffic on the new endpoint (median / max of %d)", changes),
		value: medianMax(epTook), num: epTook[len(epTook)/2].Seconds()})
	if len(epApply) > 0 {
		slices.Sort(epApply)
		rows = append(rows, row{what: "of which: controller, event → pushed (causeway_config_apply_seconds; median / max of the changes that took one sync)",
			value: fmt.Sprintf("%s (%d)", medianMax(epApply), len(epApply)), num: epApply[len(epApply)/2].Seconds()})
	}
	rows = append(rows, row{what: "nginx reloads during the endpoint changes", value: fmt.Sprint(epReloads), target: "0", met: epReloads == 0})

	peak := c.rss()
	rows = append(rows, row{what: "controller RSS after ready / peak (VmHWM)",
		value:  fmt.Sprintf("%s / %s", mib(afterReady.current), mib(peak.peak)),
		target: "< " + mib(targetRSS), met: peak.peak < targetRSS, num: float64(peak.peak)})
	nginxMem := nginxRSS(c.stateDir)
	rows = append(rows, row{what: "nginx RSS, master + workers", value: mib(nginxMem), num: float64(nginxMem)})

	files, size, err := configSize(c.stateDir)
	if err != nil {
		return nil, err
	}
	rows = append(rows, row{what: "rendered configuration", value: fmt.Sprintf("%.1f MiB in %d files", float64(size)/(1<<20), files), num: float64(size)})
	testTime, testRSS, err := nginxTest(ctx, c.stateDir, o.plane)
	if err != nil {
		return nil, err
	}
	rows = append(rows, row{what: "nginx -t (time, peak RSS)", value: fmt.Sprintf("%s, %s", testTime.Round(10*time.Millisecond), mib(testRSS)), num: testTime.Seconds()})
	rows = append(rows, row{what: "nginx reloads (start included)", value: fmt.Sprint(c.metric("causeway_nginx_reloads_total"))})

	if o.keep {
		kept, err := os.MkdirTemp("", "causeway-scale-state-")
		if err == nil {
			exec.Command("cp", "-a", c.stateDir+"/.", kept).Run()
			fmt.Fprintf(os.Stderr, "%s: state directory copied to %s\n", set.plural(), kept)
		}
	}
	return rows, nil
}

type servedResult struct {
	took time.Duration
	err  error
}

// waitServed polls until nginx routes object i's host to the backend and
// reports the time since the controller started.
func (c *controller) waitServed(ctx context.Context, set objectSet, i int, timeout time.Duration) (time.Duration, error) {
	httpc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	err := c.poll(ctx, c.start.Add(timeout), func() bool {
		addr, err := set.addr(ctx, c, i)
		if err != nil {
			return false
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		req.Host = host(i)
		resp, err := httpc.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if err != nil {
		return 0, fmt.Errorf("%s %s not served: %w", set.kind(), name(i), err)
	}
	return time.Since(c.start), nil
}

// medianMax prints the median and the max of sorted ds.
func medianMax(ds []time.Duration) string {
	return fmt.Sprintf("%s / %s", ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
}

// printTable prints one column of results per set, and with two sets the
// ratio of the second's to the first's.
func printTable(w io.Writer, o options, sets []objectSet, columns [][]row) {
	host, _ := os.Hostname()
	var what []string
	for _, s := range sets {
		what = append(what, s.describe())
	}
	fmt.Fprintf(w, "Causeway at scale: %s; data plane %s (%s, %s, %d CPUs)\n\n", strings.Join(what, "; then "),
		filepath.Base(o.plane.nginx()), time.Now().Format(time.DateOnly), host, numCPU())
	var kinds, plurals []string
	for _, s := range sets {
		kinds, plurals = append(kinds, s.kind()), append(plurals, s.plural())
	}
	label := strings.NewReplacer("{objs}", strings.Join(plurals, " / "), "{obj}", strings.Join(kinds, " / "))
	// The rows of every column, by what, in the order first seen.
	var order []string
	byWhat := make([]map[string]row, len(columns))
	for k, col := range columns {
		byWhat[k] = map[string]row{}
		for _, r := range col {
			if !slices.Contains(order, r.what) {
				order = append(order, r.what)
			}
			byWhat[k][r.what] = r
		}
	}
	if len(columns) == 1 {
		fmt.Fprintln(w, "| measurement | result | target |")
		fmt.Fprintln(w, "|---|---|---|")
	} else {
		fmt.Fprintf(w, "| measurement | %s | %s / %s | target |\n", strings.Join(plurals, " | "), plurals[1], plurals[0])
		fmt.Fprintf(w, "|---|%s---:|---|\n", strings.Repeat("---|", len(columns)))
	}
	for _, what := range order {
		cells := []string{label.Replace(what)}
		var target string
		var verdicts []string
		for k := range columns {
			r, ok := byWhat[k][what]
			if !ok {
				cells = append(cells, "–")
				continue
			}
			cells = append(cells, r.value)
			if r.target != "" {
				target = r.target
				verdicts = append(verdicts, verdict(r.met))
			}
		}
		if len(columns) == 2 {
			a, b := byWhat[0][what], byWhat[1][what]
			ratio := ""
			if a.num > 0 && b.num > 0 {
				ratio = fmt.Sprintf("%.2f×", b.num/a.num)
			}
			cells = append(cells, ratio)
		}
		if target != "" {
			target += " " + strings.Join(verdicts, " / ")
		}
		cells = append(cells, target)
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}
