// Package leader elects one replica, through a coordination.k8s.io Lease,
// to write what the controller owes the API (Ingress status and Events).
// Every replica serves traffic whether it leads or not, so losing the
// Lease is not fatal: the replica stops writing and stands for election
// again.
package leader

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Options configure an Elector.
type Options struct {
	// Client talks to the API server. Give it a request timeout shorter
	// than RenewDeadline, so one hung request cannot cost the Lease.
	Client kubernetes.Interface
	// Namespace and Name locate the Lease.
	Namespace, Name string
	// Identity names this replica in the Lease; Identity() makes one.
	Identity string
	// LeaseDuration is how long a Lease is valid after its last renewal:
	// the longest a dead leader blocks a successor. RenewDeadline is how
	// long the leader retries renewing before giving up; RetryPeriod is
	// the interval between attempts.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Recorder, when set, records "became leader" Events on the Lease.
	Recorder resourcelock.EventRecorder
	// OnChange is called with true when this replica starts leading and
	// with false when it stops. Calls are serialised.
	OnChange func(leading bool)
	Log      *slog.Logger
	// Disabled holds no election: the replica leads from Run's start to
	// its end, whatever the others do (ingress-nginx's
	// --disable-leader-election). No Lease is read or written.
	Disabled bool
}

// Elector runs the election for one replica.
type Elector struct {
	opts    Options
	elector *leaderelection.LeaderElector

	changeMu sync.Mutex // serialises transitions and OnChange calls
	mu       sync.Mutex // guards leading
	leading  bool
}

// Identity returns a name unique to this process: the host name (the pod
// name in a cluster) and a random suffix, so that two processes on one
// host never share an identity.
func Identity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "causeway"
	}
	return host + "_" + uuid.NewString()
}

// New validates opts and prepares the election.
func New(opts Options) (*Elector, error) {
	if opts.Identity == "" {
		opts.Identity = Identity()
	}
	if opts.Disabled {
		return &Elector{opts: opts}, nil
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, opts.Namespace, opts.Name,
		opts.Client.CoreV1(), opts.Client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: opts.Identity, EventRecorder: opts.Recorder})
	if err != nil {
		return nil, fmt.Errorf("leader election lock %s/%s: %w", opts.Namespace, opts.Name, err)
	}
	e := &Elector{opts: opts}
	e.elector, err = leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: opts.LeaseDuration,
		RenewDeadline: opts.RenewDeadline,
		RetryPeriod:   opts.RetryPeriod,
		// A replica that shuts down hands the Lease over at once instead of
		// making the others wait out LeaseDuration. Nothing it guards is in
		// flight by then: status and event writes check IsLeader first.
		ReleaseOnCancel: true,
		Name:            opts.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: e.started,
			OnStoppedLeading: e.stopped,
			OnNewLeader: func(identity string) {
				if identity != opts.Identity {
					opts.Log.Info("another replica leads", "lease", opts.Namespace+"/"+opts.Name, "leader", identity)
				}
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("leader election %s/%s: %w", opts.Namespace, opts.Name, err)
	}
	return e, nil
}

// Identity is this replica's name in the Lease.
func (e *Elector) Identity() string { return e.opts.Identity }

// IsLeader reports whether this replica holds the Lease now.
func (e *Elector) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading
}

// Run stands for election until ctx is done, again after every lost
// Lease. On return the Lease has been released if this replica held it.
func (e *Elector) Run(ctx context.Context) {
	if e.opts.Disabled {
		e.opts.Log.Info("leader election disabled: this replica writes status and events, as every other does", "identity", e.opts.Identity)
		e.set(ctx, true)
		<-ctx.Done()
		e.set(nil, false)
		return
	}
	e.opts.Log.Info("standing for leader election", "lease", e.opts.Namespace+"/"+e.opts.Name, "identity", e.opts.Identity)
	for ctx.Err() == nil {
		// Run returns when the Lease is lost or ctx is done.
		e.elector.Run(ctx)
		if ctx.Err() == nil {
			// A short pause, so an API server that refuses every renewal
			// is not hammered; acquiring retries on its own period anyway.
			select {
			case <-ctx.Done():
			case <-time.After(e.opts.RetryPeriod):
			}
		}
	}
}

// started runs in its own goroutine with a context that is cancelled when
// leadership ends, before stopped is called; a late start after that
// cancellation must not claim leadership.
func (e *Elector) started(ctx context.Context) {
	e.set(ctx, true)
	<-ctx.Done()
	e.set(nil, false)
}

func (e *Elector) stopped() { e.set(nil, false) }

func (e *Elector) set(ctx context.Context, leading bool) {
	e.changeMu.Lock()
	defer e.changeMu.Unlock()
	e.mu.Lock()
	if e.leading == leading || (leading && ctx.Err() != nil) {
		e.mu.Unlock()
		return
	}
	e.leading = leading
	e.mu.Unlock()
	if leading {
		e.opts.Log.Info("became leader: writing Ingress status and events", "lease", e.opts.Namespace+"/"+e.opts.Name, "identity", e.opts.Identity)
	} else {
		e.opts.Log.Info("stopped leading: no longer writing Ingress status or events", "lease", e.opts.Namespace+"/"+e.opts.Name)
	}
	if e.opts.OnChange != nil {
		e.opts.OnChange(leading)
	}
}
