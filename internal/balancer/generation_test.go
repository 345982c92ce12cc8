package balancer_test

import (
	"fmt"
	"github.com/causeway/causeway/internal/balancer"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The controller, not the payload, owns the state: a full replace is
// applied whatever its generation, so a state pushed with a huge
// generation (stale, or not the controller's) cannot lock out the
// controller's next push, nor can a controller whose clock is behind be
// refused after a restart. Updates stay ordered: one older than the
// current generation is refused, and a replace resynchronises.
func TestReplaceIgnoresGenerationOrder(t *testing.T) {
	const key = "ns/a/80"
	n := startNginx(t, nginxOptions{keys: []string{key}})
	a := startBackend(t, "127.0.0.2", "a")
	b := startBackend(t, "127.0.0.3", "b")
	n.replace(t, balancer.State{Generation: 5, Backends: []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{a.endpoint()}}}})
	// A foreign state with the largest generation there is.
	n.replace(t, balancer.State{Generation: balancer.MaxGeneration, Backends: []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{b.endpoint()}}}})
	if r := n.get(t, n.http, n.url(0, "/"), nil); r.backend != "b" {
		t.Fatalf("foreign state not applied: served by %q", r.backend)
	}
	// The controller's next push wins, with its own lower generation.
	if err := n.client.Replace(ctxT(t), balancer.State{Generation: 6, Backends: []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{a.endpoint()}}}}); err != nil {
		t.Fatalf("replace with a lower generation: %v", err)
	}
	if gen, err := n.client.Generation(ctxT(t)); err != nil || gen != 6 {
		t.Fatalf("generation %d, %v; want 6 (recorded as pushed)", gen, err)
	}
	if r := n.get(t, n.http, n.url(0, "/"), nil); r.backend != "a" {
		t.Fatalf("after the lower-generation replace: served by %q, want a", r.backend)
	}
	// Updates are ordered against the recorded generation.
	if err := n.client.Update(ctxT(t), 5, balancer.Backend{Key: key, Endpoints: []balancer.Endpoint{b.endpoint()}}); !isAPIError(err, 409) {
		t.Fatalf("older update: got %v, want 409", err)
	}
	if err := n.client.Update(ctxT(t), 6, balancer.Backend{Key: key, Endpoints: []balancer.Endpoint{b.endpoint()}}); err != nil {
		t.Fatalf("update at the current generation: %v", err)
	}
}

// The state file is loaded at every configuration load, under the write
// lock: a reload brings back the controller's last state even over a
// state pushed since with a higher generation by someone else.
func TestStateFileReplacesForeignStateOnReload(t *testing.T) {
	const key = "ns/a/80"
	a := startBackend(t, "127.0.0.2", "a")
	b := startBackend(t, "127.0.0.3", "b")
	file := stateFileOf(t, balancer.State{Generation: 3, Backends: []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{a.endpoint()}}}})
	n := startNginx(t, nginxOptions{keys: []string{key}, stateFile: file})
	if r := n.get(t, n.http, n.url(0, "/"), nil); r.status != 200 || r.backend != "a" {
		t.Fatalf("state file not loaded at start: status %d from %q", r.status, r.backend)
	}
	n.replace(t, balancer.State{Generation: balancer.MaxGeneration, Backends: []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{b.endpoint()}}}})
	if r := n.get(t, n.http, n.url(0, "/"), nil); r.backend != "b" {
		t.Fatalf("foreign state not applied: served by %q", r.backend)
	}
	n.reload(t)
	if gen, err := n.client.Generation(ctxT(t)); err != nil || gen != 3 {
		t.Errorf("after reload: generation %d, %v; want 3 (the file's)", gen, err)
	}
	if got := n.counts(t, n.url(0, "/"), 20, 2, nil); got["a"] != 20 {
		t.Errorf("after reload: %v, want all from a", got)
	}
	// An invalid file is ignored: the state stays.
	if err := os.WriteFile(file, []byte(`{"version":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	n.reload(t)
	if got := n.counts(t, n.url(0, "/"), 10, 2, nil); got["a"] != 10 {
		t.Errorf("after reload with an invalid file: %v, want all from a", got)
	}
}

// A reload that finds the write lock held (a push in progress in an old
// worker) waits for it, blocking as init_by_lua must, and then loads the
// state file.
func TestStateFileWaitsForTheWriteLock(t *testing.T) {
	const key = "ns/a/80"
	a := startBackend(t, "127.0.0.2", "a")
	b := startBackend(t, "127.0.0.3", "b")
	file := stateFileOf(t, balancer.State{Generation: 3, Backends: []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{a.endpoint()}}}})
	n := startNginx(t, nginxOptions{keys: []string{key}, stateFile: file, editConf: func(conf string) string {
		// /hold takes the write lock for 0.5 s, as a long push would.
		return strings.Replace(conf, "        proxy_read_timeout 10s;\n",
			"        proxy_read_timeout 10s;\n        location = /hold { content_by_lua_block { ngx.shared."+balancer.StateDict+":set(\"lock\", 0, 0.5) ngx.say(\"held\") } }\n", 1)
	}})
	n.replace(t, balancer.State{Generation: balancer.MaxGeneration, Backends: []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{b.endpoint()}}}})
	if r := n.get(t, n.http, fmt.Sprintf("http://127.0.0.1:%d/hold", n.port), nil); r.status != 200 {
		t.Fatalf("/hold: status %d", r.status)
	}
	n.reload(t)
	if got := n.counts(t, n.url(0, "/"), 10, 2, nil); got["a"] != 10 {
		t.Fatalf("after a reload that waited for the lock: %v, want all from a\n%s", got, n.logs())
	}
}

// stateFileOf writes st as a state file and returns its path.
func stateFileOf(t *testing.T, st balancer.State) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "state.json")
	body, err := balancer.EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// A patch applies only on exactly its base generation: computed as a
// difference from the controller's last push, it must not land on a
// state someone else pushed since (nor on a fresh nginx, generation 0,
// whose base it cannot be). Refused, it changes nothing.
func TestPatchAppliesOnlyOnItsBase(t *testing.T) {
	const keyA, keyB = "ns/a/80", "ns/b/80"
	n := startNginx(t, nginxOptions{keys: []string{keyA, keyB}})
	a := startBackend(t, "127.0.0.2", "a")
	b := startBackend(t, "127.0.0.3", "b")
	ep := func(s *testBackend) []balancer.Endpoint { return []balancer.Endpoint{s.endpoint()} }
	if err := n.client.Patch(ctxT(t), 7, 8, []balancer.Backend{{Key: keyA, Endpoints: ep(a)}}, nil); !isAPIError(err, 409) {
		t.Fatalf("patch on an empty state: got %v, want 409", err)
	}
	n.replace(t, balancer.State{Generation: 10, Backends: []balancer.Backend{{Key: keyA, Endpoints: ep(a)}, {Key: keyB, Endpoints: ep(a)}}})
	for _, base := range []int64{9, 11} {
		if err := n.client.Patch(ctxT(t), base, 12, []balancer.Backend{{Key: keyA, Endpoints: ep(b)}}, nil); !isAPIError(err, 409) {
			t.Fatalf("patch on base %d over generation 10: got %v, want 409", base, err)
		}
	}
	if r := n.get(t, n.http, n.url(0, "/"), nil); r.backend != "a" {
		t.Fatalf("a refused patch changed the state: %s served by %q", keyA, r.backend)
	}
	if err := n.client.Patch(ctxT(t), 10, 11, []balancer.Backend{{Key: keyA, Endpoints: ep(b)}}, []string{keyB}); err != nil {
		t.Fatalf("patch on its base: %v", err)
	}
	st, err := n.client.State(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.Generation != 11 || len(st.Backends) != 1 || st.Backends[0].Key != keyA || st.Backends[0].Endpoints[0].Address != "127.0.0.3" {
		t.Fatalf("after the patch: %+v, want generation 11 with %s on b only", st, keyA)
	}
	// The next patch must name the new generation as its base.
	if err := n.client.Patch(ctxT(t), 10, 12, []balancer.Backend{{Key: keyB, Endpoints: ep(a)}}, nil); !isAPIError(err, 409) {
		t.Fatalf("patch on the replaced base: got %v, want 409", err)
	}
}
