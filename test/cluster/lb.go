package cluster

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// The node's LoadBalancer implementation. A cloud gives a LoadBalancer
// Service an external address; kind users run cloud-provider-kind or
// MetalLB for that. Here each such Service gets an address of
// LoadBalancerPool in its status, and kube-proxy, which programs every
// status address, forwards traffic for it to the Service's endpoints. The
// pool lies in the node's /24 on its own interface, so no packet to it
// can leave the machine. Controllers that publish a Service's address in
// Ingress status (Causeway's --publish-service) see what they would see
// in a cloud.

// LoadBalancerPool is where LoadBalancer Services get their addresses.
var LoadBalancerPool = netip.MustParsePrefix("10.250.0.128/26")

// runLoadBalancer assigns addresses until ctx ends.
func runLoadBalancer(ctx context.Context, client kubernetes.Interface, logf func(string, ...any)) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := assignLoadBalancers(ctx, client); err != nil && ctx.Err() == nil {
			logf("load balancer: %v", err)
		}
	}, time.Second)
}

// assignLoadBalancers lists Services, gives each LoadBalancer Service
// without an address the lowest free one, and then follows changes until
// the watch ends.
func assignLoadBalancers(ctx context.Context, client kubernetes.Interface) error {
	list, err := client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	used := map[netip.Addr]string{}
	var pending []corev1.Service
	for _, svc := range list.Items {
		if addr, ok := assigned(&svc); ok {
			used[addr] = svc.Namespace + "/" + svc.Name
		} else if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			pending = append(pending, svc)
		}
	}
	for i := range pending {
		if err := assign(ctx, client, &pending[i], used); err != nil {
			return err
		}
	}
	w, err := client.CoreV1().Services("").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		svc, ok := ev.Object.(*corev1.Service)
		if !ok {
			return fmt.Errorf("watch: %v", ev.Object)
		}
		key := svc.Namespace + "/" + svc.Name
		if ev.Type == watch.Deleted || svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			for a, k := range used {
				if k == key {
					delete(used, a)
				}
			}
			continue
		}
		if _, ok := assigned(svc); !ok {
			if err := assign(ctx, client, svc, used); err != nil {
				return err
			}
		}
	}
	return nil
}

// assigned returns the pool address a Service holds.
func assigned(svc *corev1.Service) (netip.Addr, bool) {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return netip.Addr{}, false
	}
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(ing.IP); err == nil && LoadBalancerPool.Contains(a) {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func assign(ctx context.Context, client kubernetes.Interface, svc *corev1.Service, used map[netip.Addr]string) error {
	key := svc.Namespace + "/" + svc.Name
	for a := LoadBalancerPool.Addr().Next(); LoadBalancerPool.Contains(a); a = a.Next() {
		if _, taken := used[a]; taken {
			continue
		}
		svc = svc.DeepCopy()
		ipMode := corev1.LoadBalancerIPModeVIP
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: a.String(), IPMode: &ipMode}}
		if _, err := client.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("assign %s to %s: %w", a, key, err)
		}
		used[a] = key
		return nil
	}
	return fmt.Errorf("no free address in %s for %s", LoadBalancerPool, key)
}
