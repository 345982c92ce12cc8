package annotations

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// headersGroup is ingress-nginx's response headers from a ConfigMap, the
// Host header sent upstream and the per-location access log switch.
var headersGroup = Group{
	Name: "headers",
	Annotations: supported("headers",
		Annotation{Name: "custom-headers", Names: model.KindConfigMap, Scope: ScopeLocation, Default: "none",
			Grammar: "namespace/name of a ConfigMap in the Ingress's own namespace, or just its name; " +
				"its entries are added to every response; each header name must be listed in the controller ConfigMap's " +
				"global-allowed-response-headers (none by default, as in ingress-nginx)",
			Difference: "the ConfigMap must be in the Ingress's namespace (ingress-nginx documents this but does not check it); " +
				"a bare name means the Ingress's namespace (ingress-nginx finds nothing and answers 503); " +
				"an entry that is invalid or not allowed is left out with a Problem (ingress-nginx answers 503 for the whole location)"},
		Annotation{Name: "upstream-vhost", Scope: ScopeLocation, Default: "the request's Host",
			Grammar: "a lower-case DNS name or an IPv4 address, optionally followed by :port (1 to 65535)",
			Difference: "nginx variables such as $host and regular expressions are refused (ingress-nginx accepts them); " +
				"an invalid value drops the setting instead of rejecting the Ingress"},
		Annotation{Name: "enable-access-log", Scope: ScopeLocation, Default: "true (on unless the ConfigMap's disable-access-log is true)",
			Grammar: "a boolean: true, false, 1, 0, t, f (any case); false turns the access log off for the Ingress's paths"},
	),
	Parse: parseHeaders,
}

func parseHeaders(r *Reader, res *Result) {
	SetPtr(r, "custom-headers", &res.CustomHeaders, func(s string) (ObjectName, error) {
		return parseSameNamespace(s, r.ref.Namespace, "configmap")
	})
	SetPtr(r, "upstream-vhost", &res.Location.UpstreamHost, parseHostPort)
	SetPtr(r, "enable-access-log", &res.Location.AccessLog, model.ParseBool)
}

// parseSameNamespace parses "namespace/name" or "name" of an object of
// kind in namespace ns.
func parseSameNamespace(s, ns, kind string) (ObjectName, error) {
	n := ObjectName{Namespace: ns, Name: s}
	if before, after, ok := strings.Cut(s, "/"); ok {
		if err := model.ValidateObjectName("namespace", before); err != nil {
			return ObjectName{}, err
		}
		if before != ns {
			return ObjectName{}, fmt.Errorf("want a %s in the Ingress's own namespace %q, not in %q", kind, ns, before)
		}
		n.Name = after
	}
	if err := model.ValidateObjectName(kind, n.Name); err != nil {
		return ObjectName{}, err
	}
	return n, nil
}

// maxHostPortLen is a 253-byte name, ":" and a 5-digit port.
const maxHostPortLen = 253 + 6

// parseHostPort checks upstream-vhost: a lower-case DNS name or an IPv4
// address, optionally followed by ":" and a port from 1 to 65535 without
// leading zeros.
func parseHostPort(s string) (model.HeaderValue, error) {
	want := errors.New("want a host name or IPv4 address with an optional :port, such as app.example.com or app.example.com:8080")
	if s == "" || len(s) > maxHostPortLen {
		return "", want
	}
	host := s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host = s[:i]
		port := s[i+1:]
		n, err := strconv.Atoi(port)
		if err != nil || port == "" || port[0] < '1' || port[0] > '9' || len(port) > 5 || n > 65535 {
			return "", fmt.Errorf("want a port from 1 to 65535 after the host, not %q", model.Truncate(port))
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !a.Is4() || a.Zone() != "" {
			return "", want
		}
	} else if strings.HasPrefix(host, "*") {
		return "", fmt.Errorf("host %q must not be a wildcard", model.Truncate(host))
	} else if err := model.ValidateHost(host); err != nil {
		return "", err
	}
	return model.ParseHeaderValue(s)
}
