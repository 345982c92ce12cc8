package migrate

import (
	"context"
	"fmt"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"github.com/causeway/causeway/internal/source/files"
)

// FromDir reads the Ingresses and ConfigMaps of the manifests below dir
// (or in the one file dir names) with the files source's loader:
// *.yaml, *.yml and *.json, recursively, several documents a file, and
// the ingress-nginx controllers of its Deployments and DaemonSets.
// Documents that cannot be decoded are ReadProblems; other kinds are
// skipped.
func FromDir(dir string) (Objects, error) {
	if _, err := os.Stat(dir); err != nil {
		return Objects{}, err
	}
	var workloads []runtime.Object
	snap, err := files.LoadEach(dir, func(o runtime.Object) {
		switch o.(type) {
		case *appsv1.Deployment, *appsv1.DaemonSet:
			workloads = append(workloads, o)
		}
	})
	if err != nil {
		return Objects{}, err
	}
	objs := Objects{Ingresses: snap.Ingresses, ConfigMaps: snap.ConfigMaps, Controllers: ControllersIn(workloads)}
	for _, p := range snap.Problems {
		// The files source explains how it ranks Ingresses without a
		// creationTimestamp, which manifests seldom have; that concerns
		// serving a directory, not checking one.
		if strings.Contains(p.Message, "has no metadata.creationTimestamp") {
			continue
		}
		objs.ReadProblems = append(objs.ReadProblems, ReadProblem{Where: p.Where, Message: p.Message})
	}
	return objs, nil
}

// listPage is how many objects one list call asks for.
const listPage = 500

// FromCluster lists every Ingress of the cluster, the ingress-nginx
// controllers of its Deployments and DaemonSets, and the ConfigMap opts
// names (or every ConfigMap named DefaultConfigMapName). It only lists and
// gets: nothing is written.
func FromCluster(ctx context.Context, client kubernetes.Interface, opts Options) (Objects, error) {
	var objs Objects
	workloads, err := listWorkloads(ctx, client)
	switch {
	case apierrors.IsForbidden(err):
		objs.Notes = append(objs.Notes, "the controllers' flags are not checked: "+err.Error())
	case err != nil:
		return Objects{}, err
	}
	objs.Controllers = ControllersIn(workloads)
	list := metav1.ListOptions{Limit: listPage}
	for {
		page, err := client.NetworkingV1().Ingresses(metav1.NamespaceAll).List(ctx, list)
		if err != nil {
			return Objects{}, fmt.Errorf("list Ingresses: %w", err)
		}
		for i := range page.Items {
			objs.Ingresses = append(objs.Ingresses, &page.Items[i])
		}
		if page.Continue == "" {
			break
		}
		list.Continue = page.Continue
	}

	if opts.ConfigMapName != "" {
		cm, err := client.CoreV1().ConfigMaps(opts.ConfigMapNamespace).Get(ctx, opts.ConfigMapName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			// Reported as not found.
		case err != nil:
			return Objects{}, fmt.Errorf("get ConfigMap %s/%s: %w", opts.ConfigMapNamespace, opts.ConfigMapName, err)
		default:
			objs.ConfigMaps = append(objs.ConfigMaps, cm)
		}
		return objs, nil
	}
	cms, err := client.CoreV1().ConfigMaps(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", DefaultConfigMapName).String(),
	})
	if err != nil {
		return Objects{}, fmt.Errorf("list ConfigMaps named %s (name yours with --configmap NAMESPACE/NAME): %w", DefaultConfigMapName, err)
	}
	for i := range cms.Items {
		objs.ConfigMaps = append(objs.ConfigMaps, &cms.Items[i])
	}
	return objs, nil
}

// listWorkloads lists the cluster's Deployments and DaemonSets, where an
// ingress-nginx controller runs.
func listWorkloads(ctx context.Context, client kubernetes.Interface) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, l := range []struct {
		kind string
		list func(metav1.ListOptions) (runtime.Object, error)
	}{
		{"Deployments", func(o metav1.ListOptions) (runtime.Object, error) {
			return client.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, o)
		}},
		{"DaemonSets", func(o metav1.ListOptions) (runtime.Object, error) {
			return client.AppsV1().DaemonSets(metav1.NamespaceAll).List(ctx, o)
		}},
	} {
		p := pager.New(pager.SimplePageFunc(l.list))
		p.PageSize = listPage
		err := p.EachListItem(ctx, metav1.ListOptions{}, func(o runtime.Object) error {
			out = append(out, o)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", l.kind, err)
		}
	}
	return out, nil
}
