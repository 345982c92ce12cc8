package integration

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// listenerSetManifests: a Gateway with one HTTP listener for gw.test on
// port %[1]d that admits ListenerSets of every namespace; a ListenerSet
// of namespace team adding ls.test on the same port, own.test on port
// %[2]d and, in conflict with the Gateway's listener, gw.test again; a
// ListenerSet of namespace late, younger, whose only listener conflicts
// with team's ls.test; and routes by parentRef: one to the Gateway, one
// to team's ListenerSet, one to late's.
const listenerSetManifests = gatewayClassYAML + `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  allowedListeners: {namespaces: {from: All}}
  listeners:
  - {name: gw, port: %[1]d, protocol: HTTP, hostname: gw.test, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: team, namespace: team, creationTimestamp: "2026-11-28T10:00:00Z"}
spec:
  parentRef: {name: gw, namespace: default}
  listeners:
  - {name: ls, port: %[1]d, protocol: HTTP, hostname: ls.test}
  - {name: own, port: %[2]d, protocol: HTTP, hostname: own.test}
  - {name: taken, port: %[1]d, protocol: HTTP, hostname: gw.test}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: late, namespace: late, creationTimestamp: "2026-11-28T11:00:00Z"}
spec:
  parentRef: {name: gw, namespace: default}
  listeners:
  - {name: ls, port: %[1]d, protocol: HTTP, hostname: ls.test}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: to-gateway, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /gw}}]
    backendRefs: [{name: tea, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: to-team, namespace: team}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: ListenerSet, name: team}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /ls}}]
    backendRefs: [{name: coffee, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: to-late, namespace: late}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: ListenerSet, name: late}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /late}}]
    backendRefs: [{name: juice, port: 80}]
---
`

// TestListenerSetsAgainstNginx: a ListenerSet's listeners are served on
// its Gateway's port and on a port of their own, with the routes that
// name the ListenerSet only; the Gateway's routes stay on the Gateway's
// listener; a ListenerSet listener in conflict with the Gateway's, or
// with an older ListenerSet's, is not served, and the older one keeps
// its host. Deleting the ListenerSet takes its hosts away.
func TestListenerSetsAgainstNginx(t *testing.T) {
	t.Parallel()
	tea, coffee := startBackend(t, "tea"), startBackend(t, "coffee")
	juice := startBackend(t, "juice")
	c := startController(t, map[string]string{
		"services.yaml": serviceYAML("default", "tea", 80, tea) + serviceYAML("team", "coffee", 80, coffee) + serviceYAML("late", "juice", 80, juice),
	})
	port, own := freePort(t, c.IP), freePort(t, c.IP)
	c.WriteManifest("gateway.yaml", fmt.Sprintf(listenerSetManifests, port, own))
	addr := net.JoinHostPort(c.IP, strconv.Itoa(port))
	ownAddr := net.JoinHostPort(c.IP, strconv.Itoa(own))
	rows := []struct {
		addr, host, path string
		status           int
		service          string
	}{
		{addr, "gw.test", "/gw", 200, "tea"},
		{addr, "ls.test", "/ls", 200, "coffee"},
		{ownAddr, "own.test", "/ls/x", 200, "coffee"},
		// Each parentRef's routes on its own listeners only.
		{addr, "ls.test", "/gw", 404, ""},
		{addr, "gw.test", "/ls", 404, ""},
		{ownAddr, "own.test", "/gw", 404, ""},
		// late's ls.test conflicts with team's, which is older.
		{addr, "ls.test", "/late", 404, ""},
		// A host no listener names.
		{addr, "other.test", "/gw", 404, ""},
	}
	check := func(i int) error {
		r := rows[i]
		got, err := harness.Do(r.addr, harness.Request{Scheme: "http", Host: r.host, Path: r.path})
		if err != nil {
			return err
		}
		if got.Status != r.status || got.Reply.Service != r.service {
			return fmt.Errorf("%s %s%s: %d %q, want %d %q", r.addr, r.host, r.path, got.Status, got.Reply.Service, r.status, r.service)
		}
		return nil
	}
	eventually(t, 20*time.Second, func() error { return check(2) })
	for i := range rows {
		if err := check(i); err != nil {
			t.Error(err)
		}
	}
	// Nothing is silent: the conflicted listeners are Problems naming
	// their ListenerSets.
	eventually(t, 10*time.Second, func() error {
		for _, want := range []string{"late/late", "team/team", `listener \"taken\"`} {
			if !strings.Contains(c.log.String(), want) {
				return fmt.Errorf("no log line names %s", want)
			}
		}
		return nil
	})

	// Without team's ListenerSet, late's listener is served, and team's
	// hosts are gone.
	var kept []string
	for _, doc := range strings.Split(fmt.Sprintf(listenerSetManifests, port, own), "---\n") {
		if !strings.Contains(doc, "name: team, namespace: team") {
			kept = append(kept, doc)
		}
	}
	c.WriteManifest("gateway.yaml", strings.Join(kept, "---\n"))
	eventually(t, 20*time.Second, func() error {
		got, err := harness.Do(addr, harness.Request{Scheme: "http", Host: "ls.test", Path: "/late"})
		if err != nil {
			return err
		}
		if got.Status != 200 || got.Reply.Service != "juice" {
			return fmt.Errorf("ls.test/late: %d %q, want late's juice", got.Status, got.Reply.Service)
		}
		return nil
	})
	if got, err := harness.Do(ownAddr, harness.Request{Scheme: "http", Host: "own.test", Path: "/ls"}); err == nil && got.Status == 200 {
		t.Errorf("own.test still served after its ListenerSet is gone: %d %q", got.Status, got.Reply.Service)
	}
}
