package build

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
)

var updateGatewayDocs = flag.Bool("update-gateway-docs", false, "rewrite docs/gateway-api.md's feature table")

// featureNotes say why a feature of the pinned module is not supported,
// or how a supported one differs; every unsupported Gateway feature has
// one (Mesh features are another profile, not listed).
var featureNotes = map[features.FeatureName]string{
	"GatewayStaticAddresses":                        "`spec.addresses` is refused (UnsupportedAddress): a Gateway's address is its Service's",
	"GatewayAddressEmpty":                           "an address of type IPAddress without a value is given the Gateway's Service's address; one with a value is refused (GatewayStaticAddresses)",
	"GatewayInfrastructure":                         "`infrastructure.parametersRef` is refused; its labels and annotations go onto the Gateway's Service, which lives in the controller's namespace (it selects the controller's Pods), where the suite does not look",
	"ListenerSet":                                   "a ListenerSet's listeners are served on its Gateway's Service and addresses; the Gateway's own listeners, then older ListenerSets, win conflicts",
	"GatewayHTTPSListenerDetectMisdirectedRequests": "a connection without a server name (SNI) is not checked",
	"HTTPRouteDestinationPortMatching":              "the GEP-957 name of parentRefs[].port (HTTPRouteParentRefPort): a route names a listener port, and no listener of that port is NoMatchingParent",
	"HTTPRouteBackendRequestHeaderModification":     "applied after the rule's; edits that differ among a rule's backends are picked per request in the access phase ([BackendRef request headers](#backendref-request-headers)); other backendRef filters are refused",
	"HTTPRouteRequestMirror":                        "a copy keeps the client's URI as sent (before a URLRewrite) and is not retried; a GRPCRoute's RequestMirror is not served",
	"HTTPRouteRequestMultipleMirrors":               "as HTTPRouteRequestMirror",
	"HTTPRouteRequestPercentageMirror":              "drawn per request and per mirror (split_clients on $request_id); a `fraction` must be a whole percentage",
	"HTTPRouteBackendProtocolH2C":                   "a backend port of appProtocol `kubernetes.io/h2c` behind an HTTPRoute is refused (ResolvedRefs UnsupportedProtocol, its share answers 500): nginx proxies HTTP/2 only to gRPC backends, and nginx 1.22's cleartext ports do not take HTTP/2 with prior knowledge beside HTTP/1.1",
	"HTTPRouteBackendProtocolWebSocket":             "`kubernetes.io/wss` needs a BackendTLSPolicy for the Service (else UnsupportedProtocol); other values than `kubernetes.io/h2c`, `ws` and `wss` are spoken to as the route's kind speaks",
	"HTTPRouteCORS":                                 "with `allowCredentials`, `*` answers with the request's origin, method and headers; `exposeHeaders: [\"*\"]` with `allowCredentials` is refused",
	"HTTPRouteRetry":                                "codes 403, 404, 429, 500, 502, 503, 504; non-idempotent requests retried; backoff must be 0 ([Retry](#retry))",
	"HTTPRouteRetryBackendTimeout":                  "a try that exceeds `timeouts.backendRequest` is retried",
	"HTTPRouteRetryConnectionError":                 "connection errors and timeouts always retry when `retry` is set",
	"TLSRouteModeTerminate":                         "one certificate per port, the listener's first; the decrypted stream passes by the handshake's server name",
	"TLSRouteModeMixed":                             "the port reads the server name, then passes it encrypted or hands it to a server behind that terminates",
	"BackendTLSPolicy":                              "one caCertificateRef (a ConfigMap) or System; see BackendTLSPolicy above",
	"BackendTLSPolicySANValidation":                 "nginx checks the backend against one name: subjectAltNames are honoured only when they are the hostname alone, else the policy is not accepted (its backends answer 503)",
	"GRPCRoute":                                     "on nginx 1.22 a cleartext port serves gRPC only while no HTTPRoute shares it (Angie serves both)",
	"TCPRoute":                                      "one route per listener; its backends share connections by weight (nginx upstream weights)",
	"UDPRoute":                                      "one route per listener; its backends share datagrams by weight (nginx upstream weights)",
	"TLSRoute":                                      "Passthrough and Terminate modes; one backend per route",
	"HTTPRoutePathRewrite":                          "ReplacePrefixMatch on the prefix `/` puts the replacement before the whole path (`/bar` becomes `/xyz/bar`, `/` becomes `/xyz/`), which the spec leaves open",
	"HTTPRoutePathRedirect":                         "ReplacePrefixMatch cuts the rest of the path from the raw request URI: one that spells the matched prefix with percent-escapes or doubled slashes gets 400",
}

// coreFeatures are the Core features of the kinds Causeway serves.
func coreFeatures() map[features.FeatureName]bool {
	out := map[features.FeatureName]bool{}
	for _, s := range []sets.Set[features.Feature]{features.GatewayCoreFeatures, features.HTTPRouteCoreFeatures,
		features.ReferenceGrantCoreFeatures, features.GRPCRouteCoreFeatures, features.TLSRouteCoreFeatures} {
		for f := range s {
			out[f.Name] = true
		}
	}
	return out
}

// featureTable is docs/gateway-api.md's feature table.
func featureTable() string {
	supported := map[gwv1.FeatureName]bool{}
	for _, f := range GatewayFeatures {
		supported[f] = true
	}
	core := coreFeatures()
	var all []features.Feature
	for f := range features.AllFeatures {
		if !strings.HasPrefix(string(f.Name), "Mesh") {
			all = append(all, f)
		}
	}
	slices.SortFunc(all, func(a, b features.Feature) int { return cmp.Compare(a.Name, b.Name) })
	var sb strings.Builder
	sb.WriteString("| Feature | Level | Channel | Supported | Note |\n|---|---|---|---|---|\n")
	for _, f := range all {
		level, yes := "Extended", "no"
		if core[f.Name] {
			level = "Core"
		}
		if supported[gwv1.FeatureName(f.Name)] {
			yes = "yes"
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s |\n", f.Name, level, f.Channel, yes, featureNotes[f.Name])
	}
	return sb.String()
}

// TestGatewayAPIFeaturesDoc: docs/gateway-api.md lists every Gateway API
// feature of the pinned module with whether the GatewayClass claims it,
// every unsupported one says why, and every claimed one exists.
func TestGatewayAPIFeaturesDoc(t *testing.T) {
	known := map[features.FeatureName]bool{}
	for f := range features.AllFeatures {
		known[f.Name] = true
	}
	for _, f := range GatewayFeatures {
		if !known[features.FeatureName(f)] {
			t.Errorf("GatewayFeatures claims %q, which the pinned module does not define", f)
		}
	}
	claimed := map[features.FeatureName]bool{}
	for _, f := range GatewayFeatures {
		claimed[features.FeatureName(f)] = true
	}
	for f := range features.AllFeatures {
		if !strings.HasPrefix(string(f.Name), "Mesh") && !claimed[f.Name] && featureNotes[f.Name] == "" {
			t.Errorf("feature %s is not supported and featureNotes does not say why", f.Name)
		}
	}
	path := filepath.Join("..", "..", "docs", "gateway-api.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- features:begin -->\n", "<!-- features:end -->"
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q block", path, begin, end)
	}
	want := featureTable()
	if got := string(doc[i+len(begin) : j]); got != want {
		if *updateGatewayDocs {
			out := string(doc[:i+len(begin)]) + want + string(doc[j:])
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's feature table is not GatewayFeatures' (go test ./internal/build -run TestGatewayAPIFeaturesDoc -update-gateway-docs):\n%s", path, want)
	}
}
