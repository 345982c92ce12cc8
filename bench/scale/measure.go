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
// served, status on every object and single-object changes until live
// (not with -endpoints-only), endpoint changes one at a time and under
// churn, memory, the rendered configuration.
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
		rows = append(rows, row{what: fmt.Sprintf("create the {objs} + Services + EndpointSlices (%d workers)", o.workers),
			value: fmt.Sprintf("%s (%.0f objects/s)", created.Round(100*time.Millisecond), float64(3*n)/created.Seconds()), num: created.Seconds()})
	} else if err != nil {
		return nil, err
	} else if err := set.check(ctx); err != nil {
		return nil, err
	} else if err := pointSlice(ctx, client, set.namespace(), n-1, b.ip, b.port); err != nil {
		// An earlier run's backend is gone; the last object's host is
		// served (below) once its Service points at this run's.
		return nil, err
	}

	args := set.controllerArgs()
	if o.endpointsOnly {
		// No status writes: nothing to wait for, and no API load beside
		// the endpoint changes.
		args = append(args, "--update-status=false")
	}
	c, err := startController(ctx, bin, kubeconfig, stateDir, o.plane, args)
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

	lo := 0 // the first object the endpoint changes may use
	if !o.endpointsOnly {
		if rows, err = changeRounds(ctx, o, set, client, c, rows, fresh, b, phase); err != nil {
			return nil, err
		}
		lo = changes
	}
	// Endpoint changes: the Services of the objects the changes above
	// leave alone.
	ep, err := endpointRows(ctx, o, set, client, c, lo, b, phase)
	if err != nil {
		return nil, err
	}
	rows = append(rows, ep...)
	if is, ok := set.(*ingressSet); ok && o.hosts.samples > 0 {
		stopProfile := c.profile(o.profile, phase("hosts"))
		hr, err := hostRows(ctx, is, client, c, b, o.hosts)
		stopProfile()
		if err != nil {
			return nil, err
		}
		rows = append(rows, hr...)
	}

	peak := c.rss()
	rows = append(rows, row{what: "controller RSS after ready / peak (VmHWM)",
		value:  fmt.Sprintf("%s / %s", mib(afterReady.Current), mib(peak.Peak)),
		target: fmt.Sprintf("≤ %d MB (%s)", targetRSS/1_000_000, mib(targetRSS)), met: peak.Peak <= targetRSS, num: float64(peak.Peak)})
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

// changeRounds waits for status on every object, then times o.changes
// single-object changes (objects 0 to o.changes-1) and appends the rows.
func changeRounds(ctx context.Context, o options, set objectSet, client kubernetes.Interface, c *controller, rows []row, fresh bool, b backend, phase func(string) string) ([]row, error) {
	changes := o.changes
	statusStart := time.Now()
	if err := set.waitPublished(ctx, 30*time.Minute); err != nil {
		return nil, err
	}
	took := time.Since(statusStart)
	value := took.Round(100 * time.Millisecond).String()
	if !fresh {
		value += " (already published by an earlier run)"
	}
	rows = append(rows, row{what: "ready → status published on all {objs}", value: value, num: took.Seconds()})
	c.heapProfile(o.profile, phase("heap-published.pprof"))
	// Let the syncs caused by the status writes run out.
	time.Sleep(3 * time.Second)

	stopProfile := c.profile(o.profile, phase("change"))
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

// endpointRows times o.endpoints.samples single EndpointSlice changes
// over the Services of objects lo to n-1, then the churn, and returns
// their rows.
func endpointRows(ctx context.Context, o options, set objectSet, client kubernetes.Interface, c *controller, lo int, b backend, phase func(string) string) ([]row, error) {
	var rows []row
	p := newProber(o.endpoints.poll, maxProbes)
	samples := spread(lo, o.n, o.endpoints.samples)
	var churned []int
	if o.endpoints.churn.seconds > 0 {
		churned = spread(max(lo, o.n-o.endpoints.churn.services), o.n, min(o.endpoints.churn.services, o.n-lo))
	}
	if err := pointAtBackend(ctx, client, set, c, append(slices.Clone(samples), churned...), b, p); err != nil {
		return nil, err
	}
	c.settle(ctx, 2*time.Second, 2*time.Minute)
	if o.endpoints.samples > 0 {
		reloads0 := c.metric("causeway_nginx_reloads_total")
		hist := c.histogramFrom(endpointUpdateMetric)
		stopProfile := c.profile(o.profile, phase("endpoint"))
		l, err := c.endpointSamples(ctx, client, set, samples, b, p, o.endpoints.limit)
		stopProfile()
		if err != nil {
			return nil, err
		}
		rows = append(rows, l.row("one EndpointSlice changed → traffic on the new endpoint, one at a time (p50 / p99 / max (timed))"),
			l.writeRow("of which: the API server's answer to the update (p50 / p99)"))
		if h, ok := hist.row("of which: controller, event → pushed (" + endpointUpdateMetric + " p50 / p99, from its buckets)"); ok {
			rows = append(rows, h)
		}
		reloads := int(c.metric("causeway_nginx_reloads_total") - reloads0)
		rows = append(rows, row{what: "nginx reloads during the endpoint changes", value: fmt.Sprint(reloads), target: "0", met: reloads == 0})
	}
	if o.endpoints.churn.seconds > 0 {
		fmt.Fprintf(os.Stderr, "churn: %d EndpointSlice writes/s over %d Services for %d s ...\n", o.endpoints.churn.rate, len(churned), o.endpoints.churn.seconds)
		stopProfile := c.profile(o.profile, phase("churn"))
		r, err := c.churn(ctx, client, set, churned, b, p, o.endpoints.churn)
		stopProfile()
		if err != nil {
			return nil, err
		}
		rows = append(rows, r.rows(o.endpoints.churn)...)
	}
	return rows, nil
}

// printTable prints one column of results per set, titled titles, and
// with more than one the ratio of the last's to the first's.
func printTable(w io.Writer, o options, sets []objectSet, titles []string, columns [][]row) {
	host, _ := os.Hostname()
	var what []string
	for _, s := range sets {
		what = append(what, s.describe())
	}
	fmt.Fprintf(w, "Causeway at scale: %s; data plane %s (%s, %s, %d CPUs)\n\n", strings.Join(what, "; then "),
		filepath.Base(o.plane.nginx()), time.Now().Format(time.DateOnly), host, numCPU())
	var kinds, plurals []string
	for _, s := range sets {
		if !slices.Contains(kinds, s.kind()) {
			kinds, plurals = append(kinds, s.kind()), append(plurals, s.plural())
		}
	}
	label := strings.NewReplacer("{objs}", strings.Join(plurals, " / "), "{obj}", strings.Join(kinds, " / "))
	// The rows of every column, by what, in the order first seen; a
	// row only a later column has goes after its predecessor there.
	var order []string
	byWhat := make([]map[string]row, len(columns))
	for k, col := range columns {
		byWhat[k] = map[string]row{}
		at := 0 // where the next new row of this column goes
		for _, r := range col {
			if p := slices.Index(order, r.what); p >= 0 {
				at = p + 1
			} else {
				order = slices.Insert(order, at, r.what)
				at++
			}
			byWhat[k][r.what] = r
		}
	}
	if len(columns) == 1 {
		fmt.Fprintln(w, "| measurement | result | target |")
		fmt.Fprintln(w, "|---|---|---|")
	} else {
		fmt.Fprintf(w, "| measurement | %s | %s / %s | target |\n", strings.Join(titles, " | "), titles[len(titles)-1], titles[0])
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
		if len(columns) > 1 {
			a, b := byWhat[0][what], byWhat[len(columns)-1][what]
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
