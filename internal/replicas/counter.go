// Package replicas counts the controller's replicas that serve traffic:
// the ready endpoints of its own Service (--publish-service), as every
// replica sees them. NGINX Ingress Controller's rateLimit scale divides a
// Policy's rate by that count, so that the replicas together allow the
// rate once.
package replicas

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/causeway/causeway/internal/due"
)

// Counter follows the EndpointSlices of one Service.
type Counter struct {
	informer cache.SharedIndexInformer
	factory  informers.SharedInformerFactory
	service  string
	log      *slog.Logger
	changed  chan struct{}

	mu    sync.Mutex
	count int
}

// New counts the ready endpoints of the Service namespace/name.
func New(client kubernetes.Interface, namespace, name string, log *slog.Logger) (*Counter, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	selector := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name}).String()
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	c := &Counter{informer: f.Discovery().V1().EndpointSlices().Informer(), factory: f,
		service: namespace + "/" + name, log: log, changed: make(chan struct{}, 1)}
	_, err := c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.update() },
		UpdateFunc: func(any, any) { c.update() },
		DeleteFunc: func(any) { c.update() },
	})
	if err != nil {
		return nil, fmt.Errorf("watch the endpoints of %s: %w", c.service, err)
	}
	return c, nil
}

// Run starts the informer and blocks until ctx is done.
func (c *Counter) Run(ctx context.Context) {
	c.factory.Start(ctx.Done())
	if cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced) {
		c.update()
	}
	<-ctx.Done()
	c.factory.Shutdown()
}

// Count is the number of ready endpoints; 0 until they are listed, and
// while the Service has none.
func (c *Counter) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count
}

// Changed receives when the count changed.
func (c *Counter) Changed() <-chan struct{} { return c.changed }

func (c *Counter) update() {
	if !c.informer.HasSynced() {
		return
	}
	n := Ready(c.informer.GetStore().List())
	c.mu.Lock()
	old := c.count
	c.count = n
	c.mu.Unlock()
	if n != old {
		c.log.Info("replicas serving traffic", "service", c.service, "ready endpoints", n)
		due.Signal(c.changed)
	}
}

// Ready counts the ready endpoints of EndpointSlices once each: a Pod of a
// dual-stack Service is in one slice per address family, so an endpoint
// is its target Pod where it names one, else its first address.
func Ready(slices []any) int {
	seen := map[string]bool{}
	for _, o := range slices {
		s, ok := o.(*discoveryv1.EndpointSlice)
		if !ok {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			switch {
			case e.TargetRef != nil && e.TargetRef.UID != "":
				seen["uid:"+string(e.TargetRef.UID)] = true
			case e.TargetRef != nil && e.TargetRef.Name != "":
				seen["name:"+e.TargetRef.Namespace+"/"+e.TargetRef.Name] = true
			case len(e.Addresses) > 0:
				seen["addr:"+e.Addresses[0]] = true
			}
		}
	}
	return len(seen)
}
