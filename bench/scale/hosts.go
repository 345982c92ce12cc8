package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Issue 35 §3's targets: one host of an existing shape added → served, and
// removed → 404, through the API server, with no reload.
const targetHostP99 = 50 * time.Millisecond

var hostTarget = fmt.Sprintf("p99 ≤ %s, 0 reloads", targetHostP99)

// hostOptions are the host changes' flags: samples Ingresses added and
// removed one at a time, each wait given up after limit.
type hostOptions struct {
	samples int
	limit   time.Duration
}

// waitStatus polls host at addr until it answers status, and returns the
// time since start; an error once limit has passed since start.
func (p *prober) waitStatus(ctx context.Context, addr, host string, status int, start time.Time, limit time.Duration) (time.Duration, error) {
	return p.waitFor(ctx, addr, host, start, limit, fmt.Sprint(status), func(resp *http.Response) bool {
		return resp.StatusCode == status
	})
}

// slowHost is the add beyond which hostRows names the sample and when it
// was written (§3's target).
const slowHost = 50 * time.Millisecond

// hostRows adds o.samples Ingresses after the set's last, one at a time,
// each of the shape its index gives (as createOne makes them, so most
// shapes already have hosts), and removes each again: from just before
// the API write to the host served by its backend, and to its 404. Each
// Ingress's Service and EndpointSlice are written first, untimed, and
// each timed write waits until the sync the last write caused has gone
// live and the controller has been idle for 300 ms since.
func hostRows(ctx context.Context, s *ingressSet, client kubernetes.Interface, c *controller, b backend, o hostOptions) ([]row, error) {
	p := newProber(500*time.Microsecond, maxProbes)
	addr := net.JoinHostPort(c.ip, strconv.Itoa(c.httpPort))
	want := net.JoinHostPort(b.ip, strconv.Itoa(b.port))
	ings := client.NetworkingV1().Ingresses(s.ns)
	var add, remove latencies
	reloads0, state0 := c.metric("causeway_nginx_reloads_total"), c.syncState()
	for k := range o.samples {
		i := s.n + k
		if err := removeBackend(ctx, client, s.ns, i); err != nil {
			return nil, err
		}
		before := c.syncState()
		if err := createBackend(ctx, client, s.ns, i, b.ip, b.port); err != nil {
			return nil, err
		}
		// The sync the new Service causes is over before the timed
		// write: a change does not wait for another's sync here. (At
		// 10,000 Ingresses a sync takes longer than the 300 ms of
		// quiet, so settle alone would not see it coming.) Since
		// 2026-11-30 the controller takes no sync for a Service that
		// nothing names, and counts it instead.
		c.settleAfter(ctx, before, 300*time.Millisecond, 30*time.Second)
		before = c.syncState()
		ing := ingress(s.ns, i, s.shapes, s.annots)
		start := time.Now()
		if _, err := ings.Create(ctx, ing, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		add.writes = append(add.writes, time.Since(start))
		if took, err := p.waitEndpoint(ctx, addr, host(i), want, start, o.limit); err != nil {
			fmt.Fprintf(os.Stderr, "host sample %d: %v\n", k, err)
			add.failed++
		} else {
			add.took = append(add.took, took)
			if took > slowHost {
				// With the controller's --log-level=debug, its "hosts
				// pushed ahead" line for this host tells whether the
				// time went before it (the watch), in it, or after it.
				fmt.Fprintf(os.Stderr, "host sample %d (%s): created at %s, served after %s\n",
					k, host(i), start.UTC().Format("15:04:05.000"), took.Round(time.Millisecond))
			}
		}
		c.settleAfter(ctx, before, 300*time.Millisecond, 30*time.Second) // the sync after the add
		start = time.Now()
		if err := ings.Delete(ctx, ing.Name, metav1.DeleteOptions{}); err != nil {
			return nil, err
		}
		remove.writes = append(remove.writes, time.Since(start))
		if took, err := p.waitStatus(ctx, addr, host(i), http.StatusNotFound, start, o.limit); err != nil {
			fmt.Fprintf(os.Stderr, "host removal %d: %v\n", k, err)
			remove.failed++
		} else {
			remove.took = append(remove.took, took)
		}
		before = c.syncState()
		if err := removeBackend(ctx, client, s.ns, i); err != nil {
			return nil, err
		}
		// The removal's sync too is over before the next sample's
		// Service is created: else the next settleAfter could take it
		// for the new Service's, and the timed add land in the latter
		// (a whole-cluster sync, about 0.5 s at 10,000 Ingresses, which
		// the add would wait for). Since 2026-11-30 the Service's
		// removal takes none (nothing names it any more): it is
		// counted once the Ingress's sync is over.
		c.settleAfter(ctx, before, 300*time.Millisecond, 30*time.Second)
	}
	reloads := int(c.metric("causeway_nginx_reloads_total") - reloads0)
	state := c.syncState()
	return []row{
		add.hostRow("one Ingress added, a host of an existing shape → served (p50 / p99 / max (timed))"),
		add.writeRow("of which: the API server's answer to the create (p50 / p99)"),
		remove.hostRow("that Ingress removed → its host answers 404 (p50 / p99 / max (timed))"),
		{what: "nginx reloads during the host changes", value: fmt.Sprint(reloads), target: "0", met: reloads == 0},
		{what: "whole-cluster syncs during the host changes (changes that took none: a Service nothing names)",
			value: fmt.Sprintf("%d (%d)", int(state[0]-state0[0]), int(state[2]-state0[2]))},
	}, nil
}

// removeBackend deletes Service i of ns and its EndpointSlice, if there.
func removeBackend(ctx context.Context, client kubernetes.Interface, ns string, i int) error {
	err := client.CoreV1().Services(ns).Delete(ctx, name(i), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	err = client.DiscoveryV1().EndpointSlices(ns).Delete(ctx, name(i)+"-1", metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// hostRow is the p50 / p99 / max of l against §3's target.
func (l latencies) hostRow(what string) row {
	r := l.row(what)
	r.target = hostTarget
	if len(l.took) > 0 {
		r.met = l.failed == 0 && percentile(l.took, 0.99) <= targetHostP99
	}
	return r
}
