// Package files is the manifest-directory source: it reads Kubernetes
// objects from YAML files under a directory (recursively) and watches the
// directory so that edits apply without a restart. No API server is
// involved, which makes it the embedded default for demos and tests.
package files

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/gatewayservice"
	"github.com/causeway/causeway/internal/source"
)

// decoder knows client-go's built-in kinds, NGINX Ingress Controller's
// (k8s.nginx.org/v1) and Gateway API's (gateway.networking.k8s.io/v1),
// which client-go's own scheme does not. Built once: a scheme is safe for
// concurrent use once filled.
var decoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(nicv1.AddToScheme(s))
	utilruntime.Must(gwv1.Install(s))
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}()

// Source watches a manifest directory.
type Source struct {
	dir      string
	log      *slog.Logger
	quiet    time.Duration
	notifier *source.Notifier
	synced   atomic.Bool

	mu   sync.Mutex
	snap *source.Snapshot
}

// New returns a Source for dir. Run must be called to load and watch it.
func New(dir string, log *slog.Logger) *Source {
	return &Source{dir: dir, log: log, quiet: 10 * time.Millisecond, notifier: source.NewNotifier(), snap: &source.Snapshot{}}
}

// HasSynced reports whether the directory has been read once.
func (s *Source) HasSynced() bool { return s.synced.Load() }

// Changed signals a reload of the directory.
func (s *Source) Changed() <-chan struct{} { return s.notifier.C() }

// Snapshot returns the objects from the last read.
func (s *Source) Snapshot() *source.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}

// Run reads the directory, then re-reads it whenever anything below it
// changes. Bursts of file events (an editor's save, a git checkout)
// collapse into one re-read after a short quiet period.
func (s *Source) Run(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", s.dir, err)
	}
	defer w.Close()
	if err := s.reload(w); err != nil {
		return err
	}
	s.synced.Store(true)
	s.notifier.Notify()

	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("file watcher closed")
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if timer == nil {
				timer = time.After(s.quiet)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("file watcher closed")
			}
			s.log.Warn("file watcher error", "dir", s.dir, "err", err)
		case <-timer:
			timer = nil
			if err := s.reload(w); err != nil {
				s.log.Error("reading manifests failed; keeping the previous objects", "dir", s.dir, "err", err)
				continue
			}
			s.notifier.Notify()
		}
	}
}

// reload reads every file and (re)adds watches on every directory, so new
// sub-directories are watched too.
func (s *Source) reload(w *fsnotify.Watcher) error {
	snap, dirs, err := load(s.dir, nil)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := w.Add(d); err != nil {
			return fmt.Errorf("watch %s: %w", d, err)
		}
	}
	// Problems travel with the snapshot; the controller logs each once.
	s.mu.Lock()
	s.snap = snap
	s.mu.Unlock()
	return nil
}

// Load reads every *.yaml, *.yml and *.json file below dir into a Snapshot.
// A file that cannot be parsed becomes a Problem; the others still load.
func Load(dir string) (*source.Snapshot, error) {
	return LoadEach(dir, nil)
}

// LoadEach is Load that also hands each object decoded, of whatever kind,
// to each (when not nil), which may keep the kinds a Snapshot has no
// place for.
func LoadEach(dir string, each func(runtime.Object)) (*source.Snapshot, error) {
	snap, _, err := load(dir, each)
	return snap, err
}

func load(dir string, each func(runtime.Object)) (*source.Snapshot, []string, error) {
	snap := &source.Snapshot{}
	var dirs, paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			dirs = append(dirs, p)
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read manifests in %s: %w", dir, err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			snap.Problems = append(snap.Problems, source.Problem{Where: p, Message: err.Error()})
			continue
		}
		objs, problems := Parse(data, p)
		snap.Problems = append(snap.Problems, problems...)
		for _, o := range objs {
			if each != nil {
				each(o)
			}
			add(snap, o)
			if ing, ok := o.(*networkingv1.Ingress); ok && ing.CreationTimestamp.IsZero() {
				snap.Problems = append(snap.Problems, source.Problem{Where: p, Message: noTimestamp(ing)})
			}
		}
	}
	return snap, dirs, nil
}

// noTimestamp explains how an Ingress without a creationTimestamp is
// ranked. Claims on a host, path, TLS host or default backend go to the
// oldest Ingress, then the greater namespace/name (build.Build);
// a manifest usually has neither timestamp nor UID, so "oldest wins" does
// not describe what happens.
func noTimestamp(ing *networkingv1.Ingress) string {
	return fmt.Sprintf("Ingress %s/%s has no metadata.creationTimestamp: it ranks before every Ingress that has one, "+
		"and among Ingresses without one, conflicts over a host, path, TLS host or default backend are settled by "+
		"namespace/name, the greater first (as ingress-nginx breaks ties of age), not by age", ing.Namespace, ing.Name)
}

// Parse decodes the YAML or JSON documents in data ("---" separated, and
// "kind: List" expanded). where names the origin in problems.
func Parse(data []byte, where string) ([]runtime.Object, []source.Problem) {
	var objs []runtime.Object
	var problems []source.Problem
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			problems = append(problems, source.Problem{Where: where, Message: fmt.Sprintf("document %d: %v", n, err)})
			break
		}
		if len(bytes.TrimSpace(doc)) == 0 || isOnlyComments(doc) {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			problems = append(problems, source.Problem{Where: where, Message: fmt.Sprintf("document %d: %v", n, err)})
			continue
		}
		if list, ok := obj.(*corev1.List); ok {
			for i, item := range list.Items {
				o, _, err := decoder.Decode(item.Raw, nil, nil)
				if err != nil {
					problems = append(problems, source.Problem{Where: where, Message: fmt.Sprintf("document %d item %d: %v", n, i, err)})
					continue
				}
				objs = append(objs, o)
			}
			continue
		}
		objs = append(objs, obj)
	}
	return objs, problems
}

func isOnlyComments(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' {
			return false
		}
	}
	return true
}

// add files an object into the snapshot, applying the defaults the API
// server would: the "default" namespace (every kind read is namespaced but
// IngressClass, GatewayClass and Namespace; NGINX Ingress Controller's are all
// namespaced, GlobalConfiguration included), and Secret stringData merged
// into data.
func add(snap *source.Snapshot, obj runtime.Object) {
	if m, ok := obj.(metav1.Object); ok && m.GetNamespace() == "" {
		switch obj.(type) {
		case *networkingv1.IngressClass, *gwv1.GatewayClass, *corev1.Namespace:
		default:
			m.SetNamespace("default")
		}
	}
	switch o := obj.(type) {
	case *networkingv1.Ingress:
		snap.Ingresses = append(snap.Ingresses, o)
	case *networkingv1.IngressClass:
		snap.IngressClasses = append(snap.IngressClasses, o)
	case *corev1.Service:
		snap.Services = append(snap.Services, o)
		if _, ok := gatewayservice.Parse(o); ok {
			// A Gateway's Service, as the leader would keep it: the
			// manifests fix its internal ports (nothing is written here).
			snap.GatewayServices = append(snap.GatewayServices, o)
		}
	case *corev1.Namespace:
		snap.Namespaces = append(snap.Namespaces, source.TrimNamespace(o))
	case *discoveryv1.EndpointSlice:
		snap.EndpointSlices = append(snap.EndpointSlices, o)
	case *corev1.Secret:
		for k, v := range o.StringData {
			if o.Data == nil {
				o.Data = map[string][]byte{}
			}
			o.Data[k] = []byte(v)
		}
		o.StringData = nil
		snap.Secrets = append(snap.Secrets, o)
	case *corev1.ConfigMap:
		snap.ConfigMaps = append(snap.ConfigMaps, o)
	case *corev1.Pod:
		snap.Pods = append(snap.Pods, source.TrimPod(o))
	case *nicv1.VirtualServer:
		snap.VirtualServers = append(snap.VirtualServers, o)
	case *nicv1.VirtualServerRoute:
		snap.VirtualServerRoutes = append(snap.VirtualServerRoutes, o)
	case *nicv1.Policy:
		snap.Policies = append(snap.Policies, o)
	case *nicv1.TransportServer:
		snap.TransportServers = append(snap.TransportServers, o)
	case *nicv1.GlobalConfiguration:
		snap.GlobalConfigurations = append(snap.GlobalConfigurations, o)
	default:
		addGateway(snap, obj)
	}
	// Other kinds (Deployments next to the Ingress, say) are ignored.
}
