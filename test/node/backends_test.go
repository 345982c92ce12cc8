package node

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/causeway/causeway/test/cluster"
	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/testcert"
)

// The echo backend every test routes to: a Deployment of the echo image
// (make cluster-images), its Service, a TLS Secret, an Ingress with three
// of ingress-nginx's annotations and a VirtualServer.
const (
	echoNS       = "echo"
	echoHost     = "echo.causeway.test"
	echoVSHost   = "vs.causeway.test"
	echoReplicas = 3
)

func echoManifests(t *testing.T) string {
	cert, key, err := testcert.SelfSigned(0, 24*time.Hour, echoHost)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: echo, namespace: %[1]s}
spec:
  replicas: %[2]d
  selector: {matchLabels: {app: echo}}
  strategy: {rollingUpdate: {maxUnavailable: 0, maxSurge: 1}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      terminationGracePeriodSeconds: 15
      securityContext: {runAsNonRoot: true, runAsUser: 65532, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: echo
        image: %[3]s
        imagePullPolicy: Never
        args: ["echo=:8080"]
        env:
        - {name: ECHO_ENDPOINT, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        # Serve on after SIGTERM while the endpoint is being removed.
        - {name: ECHO_DRAIN, value: 5s}
        ports: [{name: http, containerPort: 8080}]
        readinessProbe:
          httpGet: {path: /, port: http}
          periodSeconds: 1
        securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: %[1]s}
spec:
  selector: {app: echo}
  ports: [{name: http, port: 80, targetPort: http}]
---
%[4]sapiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: echo
  namespace: %[1]s
  annotations:
    nginx.ingress.kubernetes.io/use-regex: "true"
    nginx.ingress.kubernetes.io/rewrite-target: /$2
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/proxy-body-size: 1k
spec:
  ingressClassName: causeway
  tls: [{hosts: [%[5]s], secretName: echo-tls}]
  rules:
  - host: %[5]s
    http:
      paths:
      - path: /api(/|$)(.*)
        pathType: ImplementationSpecific
        backend: {service: {name: echo, port: {number: 80}}}
---
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: echo, namespace: %[1]s}
spec:
  ingressClassName: causeway
  host: %[6]s
  upstreams:
  - {name: echo, service: echo, port: 80}
  routes:
  - path: /
    action: {pass: echo}
`, echoNS, echoReplicas, cluster.EchoImage, testcert.SecretYAML(echoNS, "echo-tls", cert, key), echoHost, echoVSHost)
}

// ensureBackends applies the echo workload and waits for its replicas.
func ensureBackends(t *testing.T, cw *cluster.Causeway) {
	t.Helper()
	c := node(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if _, err := c.KubectlApply(ctx, echoManifests(t)); err != nil {
		t.Fatal(err)
	}
	if err := scaleEcho(ctx, cw, echoReplicas); err != nil {
		t.Fatal(err)
	}
}

// scaleEcho scales the echo Deployment and waits until exactly n ready
// endpoints are in its EndpointSlices and no other Pod is left.
func scaleEcho(ctx context.Context, cw *cluster.Causeway, n int) error {
	if err := setEchoReplicas(ctx, cw, n); err != nil {
		return err
	}
	return waitEcho(ctx, cw, n)
}

// setEchoReplicas asks for n replicas of echo, reading the scale again
// when the Deployment's controller wrote it in between (a conflict).
func setEchoReplicas(ctx context.Context, cw *cluster.Causeway, n int) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := cw.Client.AppsV1().Deployments(echoNS).GetScale(ctx, "echo", metav1.GetOptions{})
		if err != nil || s.Spec.Replicas == int32(n) {
			return err
		}
		s.Spec.Replicas = int32(n)
		_, err = cw.Client.AppsV1().Deployments(echoNS).UpdateScale(ctx, "echo", s, metav1.UpdateOptions{})
		return err
	})
}

// waitEcho waits for the Deployment's rollout to finish with n ready
// endpoints and no Pod beyond them.
func waitEcho(ctx context.Context, cw *cluster.Causeway, n int) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := cw.Client.AppsV1().Deployments(echoNS).Get(ctx, "echo", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready, err := readyEndpoints(ctx, cw)
		if err != nil {
			return false, err
		}
		pods, err := cw.Client.CoreV1().Pods(echoNS).List(ctx, metav1.ListOptions{LabelSelector: "app=echo"})
		if err != nil {
			return false, err
		}
		last = fmt.Sprintf("deployment %d/%d updated %d, %d ready endpoints, %d pods", d.Status.ReadyReplicas, n, d.Status.UpdatedReplicas, len(ready), len(pods.Items))
		return rolledOut(d, n) && len(ready) == n && len(pods.Items) == n, nil
	})
	if err != nil {
		return fmt.Errorf("echo to %d replicas: %w (%s)", n, err, last)
	}
	return nil
}

func rolledOut(d *appsv1.Deployment, n int) bool {
	return d.Status.ObservedGeneration >= d.Generation && int(d.Status.UpdatedReplicas) == n &&
		int(d.Status.ReadyReplicas) == n && int(d.Status.Replicas) == n
}

// readyEndpoints are the ready addresses of the echo Service.
func readyEndpoints(ctx context.Context, cw *cluster.Causeway) ([]string, error) {
	slices, err := cw.Client.DiscoveryV1().EndpointSlices(echoNS).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=echo"})
	if err != nil {
		return nil, err
	}
	var ready []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				ready = append(ready, e.Addresses...)
			}
		}
	}
	return ready, nil
}

// endpointsAnswering sends requests until every one of want echo Pods has
// answered through addr, or fails after 60 requests.
func endpointsAnswering(t *testing.T, addr, scheme, host, path string, want int) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for i := 0; i < 60 && len(seen) < want; i++ {
		r, err := harness.Get(scheme, addr, host, path)
		if err != nil {
			t.Fatalf("%s %s via %s: %v", scheme, host, addr, err)
		}
		if r.Status != http.StatusOK {
			t.Fatalf("%s %s%s via %s: %d", scheme, host, path, addr, r.Status)
		}
		seen[r.Reply.Endpoint]++
	}
	if len(seen) != want {
		t.Fatalf("%s://%s%s via %s: answered by %v, want %d distinct pods", scheme, host, path, addr, seen, want)
	}
	return seen
}

// podNames are the names of the echo Pods.
func podNames(ctx context.Context, cw *cluster.Causeway) (map[string]bool, error) {
	pods, err := cw.Client.CoreV1().Pods(echoNS).List(ctx, metav1.ListOptions{LabelSelector: "app=echo"})
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			names[p.Name] = true
		}
	}
	return names, nil
}
