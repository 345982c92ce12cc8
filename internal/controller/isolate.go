package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
)

// culprits reads nginx -t output and names what to exclude: the secrets it
// refused, or else the newest object contributing to the server file it
// refused (one at a time, so that older, working objects sharing the host
// survive). A file shared by several hosts blames the newest object of
// them all; hosts share a file only when their servers are alike, so each
// would have been refused alone too. Objects are named by
// model.ObjectRef.Key.
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
	return nil, nil
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
	var newest *metav1.ObjectMeta
	var ref model.ObjectRef
	for _, r := range refs {
		meta := objectMeta(snap, r.Key())
		if meta == nil {
			continue
		}
		if newest == nil || newest.CreationTimestamp.Before(&meta.CreationTimestamp) ||
			(newest.CreationTimestamp.Equal(&meta.CreationTimestamp) && newest.UID < meta.UID) {
			newest, ref = meta, r
		}
	}
	return ref, newest != nil
}

// objectMeta finds the object a model.ObjectRef.Key names in snap.
func objectMeta(snap *source.Snapshot, key string) *metav1.ObjectMeta {
	kind, rest, _ := strings.Cut(key, "/")
	switch kind {
	case "Ingress":
		for _, ing := range snap.Ingresses {
			if ing.Namespace+"/"+ing.Name == rest {
				return &ing.ObjectMeta
			}
		}
	}
	return nil
}

// ingressKey is an Ingress's model.ObjectRef.Key.
func ingressKey(ing *networkingv1.Ingress) string {
	return model.ObjectRef{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}.Key()
}

// configMapKey is a ConfigMap's model.ObjectRef.Key.
func configMapKey(cm *corev1.ConfigMap) string {
	return model.ObjectRef{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}.Key()
}

// objectFingerprint is the fingerprint of the object a
// model.ObjectRef.Key names, "" when it is gone.
func objectFingerprint(snap *source.Snapshot, key string) string {
	kind, rest, _ := strings.Cut(key, "/")
	switch kind {
	case "Ingress":
		for _, ing := range snap.Ingresses {
			if ing.Namespace+"/"+ing.Name == rest {
				return fingerprintOf(ing)
			}
		}
	case "TransportServer":
		for _, ts := range snap.TransportServers {
			if ts.Namespace+"/"+ts.Name == rest {
				return hashJSON(ts.UID, ts.Spec)
			}
		}
	case "ConfigMap":
		for _, cm := range snap.ConfigMaps {
			if cm.Namespace+"/"+cm.Name == rest {
				return hashJSON(cm.UID, cm.Data)
			}
		}
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
