package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/source"
)

// Isolation: validation keeps hostile input out, but nginx can still refuse
// something the model accepted (a certificate OpenSSL deems too weak, say).
// When nginx -t fails, its message names the file at fault. The controller
// maps that file back to the objects that produced it, leaves them out, and
// tries again, so one bad object cannot block every other change. An
// exclusion is remembered with a fingerprint of the object and is dropped
// as soon as the object changes, so a fix is picked up at once.

type exclusion struct {
	fingerprint string
	reason      string
}

var (
	serverFileRE = regexp.MustCompile(`(/[^\s"]+/servers/[a-z0-9._-]+\.conf):[0-9]+`)
	secretFileRE = regexp.MustCompile(`(/[^\s"]+/secrets/[a-z0-9-]+_[a-z0-9._-]+\.pem)`)
	// bindFailedRE finds an address the master could not bind
	// (runtime's refusal.go): "bind() to 127.0.0.1:9000 failed (98: …)".
	bindFailedRE = regexp.MustCompile(`bind\(\) to (\S+) failed \(`)
)

// culprits reads nginx -t output and names what to exclude: the secrets it
// refused, or else the newest object contributing to the server file it
// refused (one at a time, so that older, working objects sharing the host
// survive). A file shared by several hosts blames the newest object of
// them all; hosts share a file only when their servers are alike, so each
// would have been refused alone too. For addresses the master could not
// bind, it names the newest object on each such port (listenerOwners).
// Objects are named by model.ObjectRef.Key.
func culprits(output string, dir layout.Dir, out *render.Output, m *model.Model, snap *source.Snapshot) (secrets, objects []string) {
	for _, match := range secretFileRE.FindAllStringSubmatch(output, -1) {
		if filepath.Dir(match[1]) != dir.Path(layout.SecretsDir) {
			continue
		}
		rel, err := filepath.Rel(string(dir), match[1])
		if err == nil && layout.IsDHParamFile(rel) {
			continue // checked in Go (model.ParseDHParams); not a TLS secret
		}
		if err == nil && layout.IsProxySecretFile(rel) {
			// A Secret for TLS to backends: blame the newest object
			// whose locations use it.
			if newest, ok := newestObject(proxySecretUsers(m, rel), snap); ok {
				return nil, []string{newest.Key()}
			}
			continue
		}
		base := strings.TrimSuffix(filepath.Base(match[1]), ".pem")
		ns, name, ok := strings.Cut(base, "_")
		if ok {
			secrets = append(secrets, ns+"/"+name)
		}
	}
	if len(secrets) > 0 {
		return secrets, nil
	}
	for _, match := range serverFileRE.FindAllStringSubmatch(output, -1) {
		rel, err := filepath.Rel(string(dir), match[1])
		if err != nil {
			continue
		}
		if newest, ok := newestObject(out.Sources[rel], snap); ok {
			return nil, []string{newest.Key()}
		}
	}
	for _, owners := range listenerOwners(output, m) {
		if newest, ok := newestObject(owners, snap); ok && !slices.Contains(objects, newest.Key()) {
			objects = append(objects, newest.Key())
		}
	}
	return nil, objects
}

// modSecurityMainRefused reports whether nginx's output blames the http
// level's ModSecurity rules (render/modsecurity.go): their file, not a
// server file, is named first.
func modSecurityMainRefused(output string, dir layout.Dir) bool {
	return strings.Contains(output, "File: "+dir.Path(layout.ModSecurityMain)+".")
}

// listenerOwners names, for each port nginx could not bind (another
// process holds it, say), the objects whose listeners are on it: nginx -t
// never binds, so only the reload finds out, and its message names the
// address, not a file. Each port failed on its own, so each blames one
// object. nginx's message does not say TCP or UDP, so of a port served
// both ways the newest object is left out first. A GlobalConfiguration
// HTTP listener names the VirtualServers on it. The HTTP and HTTPS ports
// belong to no object.
func listenerOwners(output string, m *model.Model) [][]model.ObjectRef {
	var out [][]model.ObjectRef
	for _, match := range bindFailedRE.FindAllStringSubmatch(output, -1) {
		_, p, err := net.SplitHostPort(match[1])
		if err != nil {
			continue // a unix socket: the controller's own
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			continue
		}
		var refs []model.ObjectRef
		for _, s := range m.Streams {
			if s.Port == port {
				refs = append(refs, s.Source)
			}
		}
		for _, srv := range m.Servers {
			if l := srv.Listeners; l != nil && (l.HTTP != nil && l.HTTP.Port == port || l.HTTPS != nil && l.HTTPS.Port == port) {
				refs = append(refs, srv.Sources...)
			}
		}
		out = append(out, refs)
	}
	return out
}

// proxySecretUsers lists the objects whose locations use the proxy secret
// file rel.
func proxySecretUsers(m *model.Model, rel string) []model.ObjectRef {
	var refs []model.ObjectRef
	for _, srv := range m.Servers {
		for _, l := range srv.Locations {
			if p := l.Policy; p != nil && p.UpstreamTLS != nil {
				for _, k := range []string{p.UpstreamTLS.Secret, p.UpstreamTLS.CASecret} {
					ns, name, _ := strings.Cut(k, "/")
					if k != "" && (rel == layout.ProxyCertFile(ns, name) || rel == layout.ProxyCAFile(ns, name)) {
						refs = append(refs, l.Source)
					}
				}
			}
		}
		if c := srv.ClientTLS; c != nil {
			ns, name, _ := strings.Cut(c.Secret, "/")
			if rel == layout.ProxyCAFile(ns, name) || rel == layout.ProxyCRLFile(ns, name) {
				refs = append(refs, c.Source)
			}
		}
	}
	return refs
}

// newestObject is the most recently created of refs that still exist in
// snap (UID breaking ties, as the model ranks claims).
func newestObject(refs []model.ObjectRef, snap *source.Snapshot) (model.ObjectRef, bool) {
	var newest metav1.Object
	var ref model.ObjectRef
	for _, r := range refs {
		obj := object(snap, r.Key())
		if obj == nil {
			continue
		}
		if newest == nil || newer(obj, newest) {
			newest, ref = obj, r
		}
	}
	return ref, newest != nil
}

// newer reports whether a was created after b, or at the same time with a
// greater UID.
func newer(a, b metav1.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	return tb.Before(&ta) || (tb.Equal(&ta) && b.GetUID() < a.GetUID())
}

// object finds the object a model.ObjectRef.Key names in snap: an
// Ingress, TransportServer, VirtualServer or ConfigMap; nil if there is
// none.
func object(snap *source.Snapshot, key string) metav1.Object {
	kind, rest, _ := strings.Cut(key, "/")
	switch kind {
	case "Ingress":
		return named(snap.Ingresses, rest)
	case "TransportServer":
		return named(snap.TransportServers, rest)
	case "VirtualServer":
		return named(snap.VirtualServers, rest)
	case "ConfigMap":
		return named(snap.ConfigMaps, rest)
	case "Gateway":
		return named(snap.Gateways, rest)
	case "HTTPRoute":
		return named(snap.HTTPRoutes, rest)
	case "GRPCRoute":
		return named(snap.GRPCRoutes, rest)
	case "TLSRoute":
		return named(snap.TLSRoutes, rest)
	case "TCPRoute":
		return named(snap.TCPRoutes, rest)
	case "UDPRoute":
		return named(snap.UDPRoutes, rest)
	}
	return nil
}

// named finds "namespace/name" among objs; nil if it is not there.
func named[T metav1.Object](objs []T, nsName string) metav1.Object {
	for _, o := range objs {
		if o.GetNamespace()+"/"+o.GetName() == nsName {
			return o
		}
	}
	return nil
}

// configMapKey is a ConfigMap's model.ObjectRef.Key.
func configMapKey(cm *corev1.ConfigMap) string {
	return model.ObjectRef{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}.Key()
}

// objectFingerprint is the fingerprint of the object a
// model.ObjectRef.Key names, "" when it is gone.
func objectFingerprint(snap *source.Snapshot, key string) string {
	if o := object(snap, key); o != nil {
		return fingerprint(o)
	}
	return ""
}

// fingerprint is what of an object decides its configuration.
func fingerprint(o metav1.Object) string {
	switch o := o.(type) {
	case *networkingv1.Ingress:
		return fingerprintOf(o)
	case *nicv1.TransportServer:
		return hashJSON(o.UID, o.Spec)
	case *nicv1.VirtualServer:
		return hashJSON(o.UID, o.Spec)
	case *corev1.ConfigMap:
		return hashJSON(o.UID, o.Data)
	case *gwv1.Gateway:
		return hashJSON(o.UID, o.Spec)
	case *gwv1.HTTPRoute:
		return hashJSON(o.UID, o.Spec)
	case *gwv1.GRPCRoute:
		return hashJSON(o.UID, o.Spec)
	case *gwv1.TLSRoute:
		return hashJSON(o.UID, o.Spec)
	case *gwv1.TCPRoute:
		return hashJSON(o.UID, o.Spec)
	case *gwv1.UDPRoute:
		return hashJSON(o.UID, o.Spec)
	}
	return ""
}

// fingerprintOf is what of an Ingress decides its configuration. Not the
// resourceVersion: our own status writes change it, and they must not make
// a refused Ingress be retried.
func fingerprintOf(ing *networkingv1.Ingress) string {
	return hashJSON(ing.UID, ing.Annotations, ing.Spec)
}

func secretFingerprint(snap *source.Snapshot, key string) string {
	for _, s := range snap.Secrets {
		if s.Namespace+"/"+s.Name == key {
			return hashJSON(s.UID, s.Type, s.Data)
		}
	}
	return ""
}

func hashJSON(parts ...any) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, p := range parts {
		_ = enc.Encode(p) // encoding plain API types cannot fail
	}
	return hex.EncodeToString(h.Sum(nil))
}

// current returns the exclusions that still apply to snap, dropping those
// whose object changed or vanished.
func current(excl map[string]exclusion, snap *source.Snapshot, fingerprint func(*source.Snapshot, string) string) map[string]string {
	out := map[string]string{}
	for key, e := range excl {
		if fingerprint(snap, key) != e.fingerprint {
			delete(excl, key)
			continue
		}
		out[key] = e.reason
	}
	return out
}
