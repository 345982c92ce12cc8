package annotations

import (
	"fmt"
	"slices"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/modsec"
)

// wafGroup is ingress-nginx's ModSecurity: enable-modsecurity,
// enable-owasp-core-rules, modsecurity-transaction-id and
// modsecurity-snippet. The builder resolves them against the ConfigMap's
// enable-modsecurity (an Ingress's value wins), gates the snippet with
// allow-snippet-annotations, and closes the Ingress's paths when what it
// asks cannot run.
var wafGroup = Group{
	Name: "waf",
	Annotations: supported("waf",
		Annotation{Name: "enable-modsecurity", Scope: ScopeLocation, Default: "the ConfigMap's enable-modsecurity",
			Grammar: "a boolean: true, false, 1, 0, t, f (any case); true runs ModSecurity on the Ingress's paths with the base configuration " +
				"(DetectionOnly: matches are logged, nothing is refused, until a snippet sets SecRuleEngine On); false turns the ConfigMap's off here",
			Difference: "an invalid value, or ModSecurity missing from nginx (Angie always), makes every path of the Ingress answer 503 " +
				"(ingress-nginx reads an invalid value as false); the audit log is one JSON line per relevant transaction on nginx's output, without bodies " +
				"(ingress-nginx: files under /var/log/audit, bodies included)"},
		Annotation{Name: "enable-owasp-core-rules", Scope: ScopeLocation, Default: "false",
			Grammar: "a boolean; with ModSecurity running, true runs the OWASP Core Rule Set (Debian's modsecurity-crs, 3.3) with anomaly scoring: " +
				"a request scoring 5 or more is refused with 403 once SecRuleEngine is On",
			Difference: "the CRS is Debian's 3.3 (ingress-nginx ships 4.x); the rules load once for every location instead of once per location; " +
				"an invalid value, or the rules missing, closes the Ingress's paths with 503 when ModSecurity runs"},
		Annotation{Name: "modsecurity-transaction-id", Scope: ScopeLocation, Default: "an ID ModSecurity draws",
			Grammar: "up to 128 letters, digits, . _ : - and the nginx variables a snippet may read, such as $request_id"},
		Annotation{Name: "modsecurity-snippet", Scope: ScopeLocation,
			Default: "none; refused with a Problem unless the ConfigMap's allow-snippet-annotations is true",
			Grammar: "ModSecurity directives of an allowlist, read into typed values: SecRuleEngine, body access and limits, the audit engine, parts and format " +
				"(SecAuditLog only to /dev/stdout or /dev/stderr), SecRuleRemoveById/ByTag/ByMsg, SecRuleUpdateTargetById/ByTag/ByMsg, SecRule, SecAction, " +
				"SecDefaultAction and SecMarker with an allowlist of variables, operators and actions, and Include of ingress-nginx's " +
				"/etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf (the CRS) or /etc/nginx/modsecurity/modsecurity.conf (inherited anyway) " +
				"(docs/security.md, \"ModSecurity\")",
			Difference: "files, programs, the network and the environment are refused (SecDebugLog, SecAuditLog to a file, exec, setenv, initcol, @pmFromFile, " +
				"@inspectFile, @rbl, ENV ...), and rule ids 900000-999999 (the CRS's), those of the base configuration and those of the ConfigMap's rules are taken; " +
				"a refused snippet makes every path answer 503 when ModSecurity runs; the base configuration always loads under it " +
				"(in ingress-nginx a snippet without the ConfigMap's enable-modsecurity replaces it)"},
	),
	Parse: parseModSecurity,
}

func parseModSecurity(r *Reader, res *Result) {
	ms := &ModSecuritySettings{}
	res.ModSecurity = ms
	r.setKeys(&ms.Keys, "enable-modsecurity", "enable-owasp-core-rules", "modsecurity-transaction-id", "modsecurity-snippet")
	if v, ok := r.Get("enable-modsecurity"); ok {
		on, err := model.ParseBool(v)
		if err != nil {
			// Whether the paths were meant to be inspected is unknown.
			r.FailClosed("enable-modsecurity", v, err)
		} else {
			ms.Enable = &on
		}
	}
	if v, ok := r.Get("enable-owasp-core-rules"); ok {
		on, err := model.ParseBool(v)
		if err != nil {
			ms.refuse(r.ref, r.Key("enable-owasp-core-rules"), fmt.Sprintf("value %q: %v", model.Truncate(v), err))
		}
		ms.CRS = on
	}
	if v, ok := r.Get("modsecurity-transaction-id"); ok {
		if id, err := modsec.TransactionID(v); err != nil {
			r.Invalid("modsecurity-transaction-id", v, err)
		} else {
			ms.TransactionID = id
		}
	}
	if v, ok := r.Get("modsecurity-snippet"); ok {
		ms.SnippetKey = r.Key("modsecurity-snippet")
		rules, err := modsec.Parse(v, modsec.Options{Reserved: []model.SecIDRange{model.SecCRSIDs}})
		if err != nil {
			ms.refuse(r.ref, ms.SnippetKey, err.Error()+"; the whole snippet is refused")
		} else {
			ms.Rules = rules
			ms.CRS = ms.CRS || rules.Includes(model.SecIncludeCRS)
		}
	}
}

// ModSecuritySettings are an Ingress's ModSecurity annotations, which the
// builder resolves against the ConfigMap's.
type ModSecuritySettings struct {
	// Enable is enable-modsecurity; nil when it is not set (or invalid:
	// then the Ingress is closed).
	Enable *bool
	// CRS is enable-owasp-core-rules, or a snippet that includes the CRS.
	CRS           bool
	TransactionID model.Template
	// Rules are what modsecurity-snippet parsed into; SnippetKey is its
	// full key when set.
	Rules      *model.SecRules
	SnippetKey string
	// Refused are the full keys of the settings that could not be used:
	// when ModSecurity runs for the Ingress, its paths answer 503 rather
	// than being inspected without them. Problems say why.
	Refused  []string
	Problems []model.Problem
	// Keys are the full keys set, sorted.
	Keys []string
}

// refuse records a setting that cannot be used, and why.
func (ms *ModSecuritySettings) refuse(ref model.ObjectRef, key, why string) {
	ms.refuseAs(ref, model.ReasonInvalidAnnotation, key, why)
}

func (ms *ModSecuritySettings) refuseAs(ref model.ObjectRef, reason, key, why string) {
	ms.Refused = append(ms.Refused, key)
	ms.Problems = append(ms.Problems, model.Problem{Object: ref, Reason: reason,
		Message: fmt.Sprintf("annotation %s: %s; %s", key, why, ModSecurityRefused)})
}

// ModSecurityRefused says what becomes of an Ingress whose ModSecurity
// setting is refused.
const ModSecurityRefused = "when ModSecurity runs for this Ingress, every path answers 503 rather than being inspected without it"

// gate refuses modsecurity-snippet while the ConfigMap's
// allow-snippet-annotations is false.
func (ms *ModSecuritySettings) gate(ref model.ObjectRef) {
	if ms == nil || ms.SnippetKey == "" || slices.Contains(ms.Refused, ms.SnippetKey) {
		return
	}
	ms.Rules = nil
	ms.refuseAs(ref, model.ReasonUnsupportedAnnotation, ms.SnippetKey, "refused: the ConfigMap's allow-snippet-annotations is false (the default)")
}
