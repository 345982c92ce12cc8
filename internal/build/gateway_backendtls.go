package build

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// BackendTLSPolicies meet the build here: the front-end
// (internal/frontend/gateway/backendtls.go) checks them, with the CA
// bundles of the ConfigMaps they name read here; route targets ask which
// applies to their Service port (by the port's name, the policies'
// sectionName); each policy's ancestors are the Gateways of the routes
// that reach its targets.

// checkBackendTLS checks the snapshot's BackendTLSPolicies and returns
// the lookup route translations use (gateway.RouteEnv.BackendTLS).
func (b *gatewayProcessor) checkBackendTLS(snap *source.Snapshot) func(gateway.Backend) *gateway.BackendTLSPolicy {
	if len(snap.BackendTLSPolicies) == 0 {
		b.backendTLS = nil
		return nil
	}
	bt, problems := gateway.CheckBackendTLSPolicies(snap.BackendTLSPolicies, b.configMapCA)
	b.problems = append(b.problems, problems...)
	b.backendTLS = bt
	return func(be gateway.Backend) *gateway.BackendTLSPolicy {
		return bt.For(be.Namespace, be.Service, b.servicePortName(be))
	}
}

// servicePortName is the name of the Service port a backend names, ""
// when it has none.
func (b *gatewayProcessor) servicePortName(be gateway.Backend) string {
	svc := b.idx.service(be.Namespace, be.Service)
	if svc == nil {
		return ""
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == be.Port {
			return p.Name
		}
	}
	return ""
}

// configMapCA validates a ConfigMap's ca.crt as a CA bundle
// (gateway.CACheck): PEM certificates that parse, and nothing else.
func (b *gatewayProcessor) configMapCA(ns, name string) (string, error) {
	key := ns + "/" + name
	if c, ok := b.proxyCAs[key]; ok {
		return c.Key(), nil
	}
	cm := b.configMaps[key]
	if cm == nil {
		return "", fmt.Errorf("ConfigMap %s %w", key, errNotFound)
	}
	data, ok := cm.Data["ca.crt"]
	if !ok {
		if _, bin := cm.BinaryData["ca.crt"]; bin {
			return "", fmt.Errorf("ConfigMap %s holds ca.crt as binary data; want PEM text in data", key)
		}
		return "", fmt.Errorf("ConfigMap %s has no key ca.crt", key)
	}
	ca := []byte(data)
	if err := model.CheckChainSize(ca); err != nil {
		return "", fmt.Errorf("ConfigMap %s ca.crt: %w", key, err)
	}
	if !certificatesOnly(ca) {
		return "", errors.New("ConfigMap " + key + " ca.crt holds no PEM certificate, or something else besides")
	}
	c := &model.ProxyCA{Namespace: ns, Name: name, CA: ca}
	b.proxyCAs[key] = c
	return c.Key(), nil
}

// backendTLSUsed records the Gateways of a route's accepted attachments as
// ancestors of the policies its targets carry.
func (b *gatewayProcessor) backendTLSUsed(at gateway.Attached, rules *gateway.RouteRules) {
	if b.backendTLS == nil || rules == nil {
		return
	}
	for _, a := range at.Attachments {
		if !a.Accepted() {
			continue
		}
		for _, rule := range rules.Rules {
			for _, t := range rule.Targets {
				if t.TLS != nil {
					t.TLS.Used(a.Gateway.Ref)
				}
			}
		}
	}
}

// finishBackendTLS completes the policies' ancestors and hands them to
// the status writer (gateway.Resolution.BackendTLS).
func (b *gatewayProcessor) finishBackendTLS() {
	if b.backendTLS == nil || b.gatewayResolution == nil {
		return
	}
	b.backendTLS.Finish()
	b.gatewayResolution.BackendTLS = b.backendTLS.Policies
}

// addProxyCAs adds to the model the CA bundles of ConfigMaps that the
// Gateway servers' locations verify backends with, and that HTTPS
// listeners verify clients with.
func (b *gatewayProcessor) addProxyCAs() {
	used := map[string]bool{}
	for _, l := range b.listeners {
		if l.ClientCA != "" {
			used[l.ClientCA] = true
		}
	}
	for _, srv := range b.servers {
		for _, l := range srv.Locations {
			if l.Policy != nil && l.Policy.UpstreamTLS != nil && l.Policy.UpstreamTLS.CAConfigMap != "" {
				used[l.Policy.UpstreamTLS.CAConfigMap] = true
			}
		}
	}
	for key, c := range b.proxyCAs {
		if used[key] {
			b.model.ProxyCAs = append(b.model.ProxyCAs, c)
		}
	}
	slices.SortFunc(b.model.ProxyCAs, func(x, y *model.ProxyCA) int { return strings.Compare(x.Key(), y.Key()) })
}
