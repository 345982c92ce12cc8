package equivalence

import (
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/migrate/togateway"
	"github.com/causeway/causeway/internal/model"
)

// covers says which aspects of a difference a finding of each rule
// explains, when the finding is not "converted": "route" (where requests
// go and what answers), "policy." and "server." prefixes of a field
// ("policy." alone: any field of the location's policy), "backend."
// likewise, "*" anything (raw configuration, an annotation the converter
// does not read). Every rule whose outcome is not Converted has an entry
// (TestEveryRuleCovers).
var covers = map[string][]string{
	"ingress-rejected":               {"*"},
	"path-implementation-specific":   {"route"},
	"use-regex":                      {"route"},
	"regex-host":                     {"route"},
	"rewrite-target-prefix":          {"route", "policy.Rewrite"},
	"rewrite-target-captures":        {"route", "policy.Rewrite"},
	"permanent-redirect":             {"route"},
	"temporal-redirect":              {"route"},
	"redirect-variables":             {"route"},
	"force-ssl-redirect-without-tls": {"route", "server.Policy"},
	"canary-weight":                  {"route"},
	"canary-by-cookie":               {"route"},
	"canary-without-main":            {"route"},
	"ssl-redirect-trailing-slash":    {"route"},
	"ssl-redirect-per-path":          {"route"},
	"tls-wildcard-host":              {"route", "server.TLS"},
	"upstream-vhost-port":            {"policy.RequestHeaders"},
	"proxy-timeouts":                 {"policy.Timeouts"},
	"cors-any-origin-credentials":    {"policy.CORS"},
	"cors-listed-origins":            {"policy.CORS"},
	"configmap-not-read":             {"headers"},
	"header-variable":                {"headers"},
	"auth":                           {"policy.", "server.ClientTLS"},
	"source-range":                   {"policy.Access", "policy.Satisfy"},
	"other-security":                 {"policy.", "server."},
	"configmap-security":             {"policy.Access", "policy.ExternalAuth"},
	"limits":                         {"policy.Limits"},
	"snippet":                        {"*"},
	"grpc-path":                      {"route"},
	"grpc-filter":                    {"route", "policy."},
	"backend-protocol-tls":           {"policy.Protocol", "policy.UpstreamTLS"},
	"affinity-cookie":                {"backend.Balance"},
	"affinity-detail":                {"backend.Balance"},
	"default-backend":                {"route"},
	"rule-without-host":              {"route"},
	"path-shadowed":                  {"route"},
	"named-port":                     {"route"},
	"tls-without-secret":             {"route", "server.TLS"},
	"tls-shadowed":                   {"server.TLS"},
	"ssl-passthrough-not-converted":  {"route"},
	"invalid":                        {"policy.", "server."},
	"other":                          {"*"},
}

// coversAspect reports whether a finding explains aspect. "headers"
// stands for the headers of the finding's input: custom-headers the
// response's, the ConfigMap's proxy-set-headers the request's.
func coversAspect(f togateway.Finding, aspect string) bool {
	for _, c := range covers[f.Rule] {
		if c == "headers" {
			c = "policy.RequestHeaders"
			if strings.HasSuffix(f.Input, "/custom-headers") {
				c = "policy.ResponseHeaders"
			}
		}
		if c == "*" || c == aspect || strings.HasSuffix(c, ".") && strings.HasPrefix(aspect, c) {
			return true
		}
	}
	return false
}

// explain lists the findings ("rule input") that explain a difference of
// aspect in ing's requests to host: ing's own, those of the objects that
// made the Ingress side's answer (a canary Ingress), and the ConfigMap's;
// a finding about another host (its message starts "host NAME") does not.
func (c *checker) explain(aspect, host string, ing model.ObjectRef, sources []model.ObjectRef) []string {
	var out []string
	use := func(fs []togateway.Finding) {
		for _, f := range fs {
			if f.Outcome != togateway.Converted && coversAspect(f, aspect) && aboutHost(f, host) {
				if s := f.Rule + " " + f.Input; !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	use(c.findings[ing.Namespace+"/"+ing.Name])
	for _, s := range sources {
		if s.Kind == "Ingress" && s != ing {
			use(c.findings[s.Namespace+"/"+s.Name])
		}
	}
	use(c.global)
	return out
}

// aboutHost reports whether a finding may concern requests to host (as
// requests name it: "wildcard.<suffix>", anyHost): true unless its message
// names another host, as the converter's do ("host NAME: ...").
func aboutHost(f togateway.Finding, host string) bool {
	rest, ok := strings.CutPrefix(f.Message, "host ")
	if !ok {
		return true
	}
	name, _, _ := strings.Cut(rest, " ")
	name = strings.TrimSuffix(name, ":")
	switch {
	case name == "(any)":
		return host == anyHost
	case strings.HasPrefix(name, "*."):
		return host == "wildcard"+name[1:]
	}
	return name == host
}
