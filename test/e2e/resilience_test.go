package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/causeway/causeway/test/testcert"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLeaderHandOver runs two replicas: both serve traffic, only the
// leader writes status, and when the leader is killed the other takes
// over and writes status within the lease duration (plus one retry period
// and the write itself).
func TestLeaderHandOver(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createService(t, ns, "app", startBackend(t, "app"))
	args := []string{"--publish-address", "192.0.2.50"}
	a := startController(t, controllerConfig{Namespace: ns, Args: args})
	b := startController(t, controllerConfig{Namespace: ns, Args: args})
	var leader, follower *controller
	eventually(t, waitFor, func() error {
		switch la, lb := a.IsLeader(), b.IsLeader(); {
		case la && !lb:
			leader, follower = a, b
		case lb && !la:
			leader, follower = b, a
		default:
			return fmt.Errorf("leaders: a=%v b=%v, want exactly one", la, lb)
		}
		return nil
	})

	createIngress(t, newIngress(ns, "before", "before.e2e.test", "app"))
	waitStatus(t, ns, "before", waitFor, "192.0.2.50")
	leader.waitServed("before.e2e.test", "app")
	follower.waitServed("before.e2e.test", "app") // every replica serves
	if n := follower.Metric("causeway_ingress_status_writes_total"); n != 0 {
		t.Errorf("the follower wrote status %v times", n)
	}

	leader.Kill()
	killed := time.Now()
	createIngress(t, newIngress(ns, "after", "after.e2e.test", "app"))
	bound := leaseDuration + 2*retryPeriod + 3*time.Second
	waitStatus(t, ns, "after", bound, "192.0.2.50")
	t.Logf("status written by the new leader %s after the old one was killed (lease duration %s)",
		time.Since(killed).Round(10*time.Millisecond), leaseDuration)
	if !follower.IsLeader() {
		t.Errorf("the surviving replica does not report leading")
	}
	follower.waitServed("after.e2e.test", "app")
}

// TestAPIOutage stops kube-apiserver under a running controller: nginx
// keeps serving and /healthz stays 200 (liveness must not depend on the
// API), and once the API is back a new change applies and is published.
// It runs alone, since every test shares the API server.
func TestAPIOutage(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "app", startBackend(t, "app"))
	c := startController(t, controllerConfig{Namespace: ns, Args: []string{"--publish-address", "192.0.2.60"}})
	c.WaitLeader(waitFor)
	createIngress(t, newIngress(ns, "before", "before.e2e.test", "app"))
	c.waitServed("before.e2e.test", "app")
	waitStatus(t, ns, "before", waitFor, "192.0.2.60")

	if err := e2e.env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	stopped := true
	t.Cleanup(func() {
		if stopped { // never leave the other tests without an API server
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := e2e.env.StartAPIServer(ctx); err != nil {
				t.Errorf("restart kube-apiserver: %v", err)
			}
		}
	})
	// Long enough for the leader to lose its Lease and the informers to
	// start backing off.
	consistently(t, renewDeadline+3*time.Second, func() error {
		if err := c.served("before.e2e.test", "app"); err != nil {
			return fmt.Errorf("traffic during the outage: %w", err)
		}
		if s := c.probe("/healthz"); s != http.StatusOK {
			return fmt.Errorf("/healthz answered %d during the outage", s)
		}
		if c.Exited() {
			return fmt.Errorf("controller exited during the outage")
		}
		return nil
	})

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c.apiRestart = time.Now()
	if err := e2e.env.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	stopped = false
	createIngress(t, newIngress(ns, "after", "after.e2e.test", "app"))
	c.waitServed("after.e2e.test", "app")
	waitStatus(t, ns, "after", waitFor, "192.0.2.60")
	c.waitServed("before.e2e.test", "app")
}

// TestIsolationAcrossRestart uses an object that passes validation but
// that nginx refuses: a TLS secret with an RSA-1024 key, which Go accepts
// and OpenSSL at security level 2 does not. It is reported, its host falls
// back to the default certificate, other changes keep applying, and after
// a restart with it still present the controller becomes ready and serves
// the others.
func TestIsolationAcrossRestart(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createService(t, ns, "app", startBackend(t, "app"))
	c := startController(t, controllerConfig{Namespace: ns})
	c.WaitLeader(waitFor)
	createIngress(t, newIngress(ns, "good-a", "a.iso.e2e.test", "app"))
	c.waitServed("a.iso.e2e.test", "app")

	const weakHost = "weak.iso.e2e.test"
	certPEM, keyPEM := weakCertificate(t, weakHost)
	_, err := e2e.admin.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "weak-tls"},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	weak := newIngress(ns, "weak", weakHost, "app")
	weak.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{weakHost}, SecretName: "weak-tls"}}
	createIngress(t, weak)
	waitEvent(t, ns, "weak", corev1.EventTypeWarning, "Rejected", "InvalidSecret", "refused by nginx", "key too small")
	checkWeak := func() {
		t.Helper()
		eventually(t, waitFor, func() error {
			r, err := c.GetTLS(weakHost, "/")
			if err != nil {
				return err
			}
			if r.Status != http.StatusOK || r.Reply.Service != "app" || r.PeerCN == weakHost {
				return fmt.Errorf("https://%s/: status %d from %q with certificate %q; want 200 from app with the default certificate", weakHost, r.Status, r.Reply.Service, r.PeerCN)
			}
			return nil
		})
	}
	checkWeak()

	createIngress(t, newIngress(ns, "good-c", "c.iso.e2e.test", "app"))
	c.waitServed("c.iso.e2e.test", "app")

	c.Restart()
	c.waitServed("a.iso.e2e.test", "app")
	c.waitServed("c.iso.e2e.test", "app")
	checkWeak()
}

// weakCertificate returns a self-signed certificate and key for host with
// an RSA-1024 key.
func weakCertificate(t *testing.T, host string) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := testcert.SelfSigned(1024, 24*time.Hour, host)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}
