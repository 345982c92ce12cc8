package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// objectSet is what one controller run serves and the benchmark measures:
// n routing objects (Ingresses, or HTTPRoutes over Gateways), each with
// its own Service and EndpointSlice, in a namespace of their own. Object
// i routes host(i)'s "/" and "/s<i mod shapes>" to Service i.
type objectSet interface {
	// kind is the routing objects' kind, and plural its plural.
	kind() string
	plural() string
	namespace() string
	// describe says what create makes, for the table.
	describe() string
	// create makes the namespace and the objects, and reports how long
	// the objects took.
	create(ctx context.Context, ip string, port int) (time.Duration, error)
	// check makes sure that objects left by an earlier run (-kubeconfig)
	// are the ones this run would have made.
	check(ctx context.Context) error
	// controllerArgs are the controller's flags for this set.
	controllerArgs() []string
	// waitPublished waits until the controller has written every
	// object's status.
	waitPublished(ctx context.Context, timeout time.Duration) error
	// setHost reads object i and returns the write that changes its one
	// host, to be timed.
	setHost(ctx context.Context, i int, host string) (write func() error, err error)
	// addr is the address (host:port) at which c's nginx serves object
	// i; an error while it cannot tell yet.
	addr(ctx context.Context, c *controller, i int) (string, error)
}

// ingressSet is n Ingresses of IngressClass causeway in namespace ns
// (bench, or bench-<n>[-a<annotations>] with -sizes), the benchmark's first and default
// set.
type ingressSet struct {
	client                     kubernetes.Interface
	ns                         string
	n, workers, shapes, annots int
}

func (s *ingressSet) kind() string      { return "Ingress" }
func (s *ingressSet) plural() string    { return "Ingresses" }
func (s *ingressSet) namespace() string { return s.ns }

func (s *ingressSet) describe() string {
	return fmt.Sprintf("%d Ingresses (%d shapes, %s) + Services + EndpointSlices (%d workers) in namespace %s", s.n, s.shapes, annotationsNote(s.annots), s.workers, s.ns)
}

func (s *ingressSet) create(ctx context.Context, ip string, port int) (time.Duration, error) {
	return createObjects(ctx, s.client, s.ns, s.n, s.workers, s.shapes, s.annots, ip, port)
}

func (s *ingressSet) check(ctx context.Context) error {
	return checkExisting(ctx, s.client, s.ns, s.shapes, s.annots)
}

// controllerArgs leave Gateway API off, as in the runs before HTTPRoutes
// were measured (their API server had no Gateway API CRDs).
func (s *ingressSet) controllerArgs() []string {
	return []string{"--configmap", s.ns + "/causeway", "--watch-namespace", s.ns, "--enable-gateway-api=false"}
}

func (s *ingressSet) waitPublished(ctx context.Context, timeout time.Duration) error {
	return waitPublished(ctx, s.client, s.ns, s.n, timeout)
}

func (s *ingressSet) setHost(ctx context.Context, i int, host string) (func() error, error) {
	ing, err := s.client.NetworkingV1().Ingresses(s.ns).Get(ctx, name(i), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	ing.Spec.Rules[0].Host = host
	return func() error {
		_, err := s.client.NetworkingV1().Ingresses(s.ns).Update(ctx, ing, metav1.UpdateOptions{})
		return err
	}, nil
}

func (s *ingressSet) addr(_ context.Context, c *controller, _ int) (string, error) {
	return net.JoinHostPort(c.ip, strconv.Itoa(c.httpPort)), nil
}
