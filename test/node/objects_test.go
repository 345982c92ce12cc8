package node

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/causeway/causeway/test/cluster"
)

// release0 is an admin clientset of the node, for tests that run without
// an installed release.
func release0(c *cluster.Cluster) kubernetes.Interface {
	client, err := c.Client()
	if err != nil {
		panic(err)
	}
	return client
}

// release0Image is Causeway's image as the node knows it (make image).
func release0Image(t *testing.T) string {
	t.Helper()
	refs, err := cluster.ArchiveRefs(imageArchive(t))
	if err != nil {
		t.Fatal(err)
	}
	return refs[0]
}

func ptrTo[T any](v T) *T { return &v }

// kept are what helm uninstall leaves on purpose (docs/install.md): the
// CRDs (helm never deletes what a chart's crds/ installed), the namespace
// helm install --create-namespace made, what Kubernetes puts in every
// namespace, and Events, which the API server expires.
func kept(gvr schema.GroupVersionResource, ns, name string) bool {
	switch {
	case gvr.Resource == "customresourcedefinitions", gvr.Resource == "events":
		return true
	case gvr.Resource == "namespaces":
		return true
	case gvr.Resource == "serviceaccounts" && name == "default":
		return true
	case gvr.Resource == "configmaps" && name == "kube-root-ca.crt":
		return true
	}
	return false
}

// leftObjects lists every object of every listable kind that belongs to
// the release: in its namespace, or elsewhere with its label or a name
// holding "causeway", but for what kept allows.
func leftObjects(ctx context.Context, c *cluster.Cluster, cw *cluster.Causeway) ([]string, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.WarningHandler = rest.NoWarnings{}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lists, err := disc.ServerPreferredResources()
	if err != nil {
		return nil, err
	}
	var left []string
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !contains(r.Verbs, "list") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			objs, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("list %s: %w", gvr, err)
			}
			for _, o := range objs.Items {
				ns, name := o.GetNamespace(), o.GetName()
				ours := ns == cw.Namespace || o.GetLabels()["app.kubernetes.io/instance"] == cw.Release ||
					strings.Contains(name, "causeway")
				if !ours || kept(gvr, ns, name) {
					continue
				}
				left = append(left, fmt.Sprintf("%s %s/%s", r.Kind, ns, name))
			}
		}
	}
	sort.Strings(left)
	return left, nil
}

func contains(verbs metav1.Verbs, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}
