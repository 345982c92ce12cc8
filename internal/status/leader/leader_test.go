package leader

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

// replica is one Elector running against a shared fake API.
type replica struct {
	e      *Elector
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	changes []bool
}

func startReplica(t *testing.T, client *fake.Clientset, id string) *replica {
	t.Helper()
	r := &replica{done: make(chan struct{})}
	e, err := New(Options{
		Client: client, Namespace: "ns", Name: "lease", Identity: id,
		LeaseDuration: time.Second, RenewDeadline: 600 * time.Millisecond, RetryPeriod: 100 * time.Millisecond,
		OnChange: func(leading bool) {
			r.mu.Lock()
			r.changes = append(r.changes, leading)
			r.mu.Unlock()
		},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { e.Run(ctx); close(r.done) }()
	t.Cleanup(r.stop)
	return r
}

func (r *replica) stop() {
	r.cancel()
	<-r.done
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHandOver checks that exactly one replica leads, that a replica
// stopping hands the Lease over at once, and that OnChange reports both
// transitions.
func TestHandOver(t *testing.T) {
	client := fake.NewClientset()
	a := startReplica(t, client, "a")
	waitUntil(t, "a leads", a.e.IsLeader)
	b := startReplica(t, client, "b")
	time.Sleep(300 * time.Millisecond) // b tries, and must fail, a few times
	if b.e.IsLeader() {
		t.Fatal("two replicas lead")
	}

	start := time.Now()
	a.stop() // releases the Lease
	waitUntil(t, "b leads", b.e.IsLeader)
	// Released, so b need not wait out the lease duration.
	if took := time.Since(start); took > 900*time.Millisecond {
		t.Errorf("hand-over took %s, want less than the lease duration", took)
	}
	if a.e.IsLeader() {
		t.Error("a still reports leading after it stopped")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.changes) != 2 || !a.changes[0] || a.changes[1] {
		t.Errorf("a's OnChange calls = %v, want [true false]", a.changes)
	}
}

func TestIdentityIsUnique(t *testing.T) {
	if Identity() == Identity() {
		t.Error("two identities are equal")
	}
}

// TestDisabled: without an election (--disable-leader-election) every
// replica leads while it runs, and no Lease is touched.
func TestDisabled(t *testing.T) {
	client := fake.NewClientset()
	var electors []*Elector
	var changes [2][]bool
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 2 {
		e, err := New(Options{Client: client, Namespace: "ns", Name: "lease", Disabled: true,
			OnChange: func(leading bool) {
				mu.Lock()
				changes[i] = append(changes[i], leading)
				mu.Unlock()
			},
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		electors = append(electors, e)
		wg.Go(func() { e.Run(ctx) })
	}
	waitUntil(t, "both lead", func() bool { return electors[0].IsLeader() && electors[1].IsLeader() })
	cancel()
	wg.Wait()
	for i, e := range electors {
		if e.IsLeader() {
			t.Errorf("replica %d still leads after Run returned", i)
		}
		if got := changes[i]; len(got) != 2 || !got[0] || got[1] {
			t.Errorf("replica %d: OnChange calls %v, want [true false]", i, got)
		}
	}
	if len(client.Actions()) != 0 {
		t.Errorf("the API was called: %v", client.Actions())
	}
}
