package annotations

import (
	"strconv"
	"strings"
)

// NGINX App Protect's Ingress annotations (appprotect.f5.com/ for the WAF,
// appprotectdos.f5.com/ for DoS protection), which NGINX Ingress Controller
// reads only when built with those NGINX Plus modules. Causeway has
// neither module: a WAF asked for, or a DoS protected resource named,
// closes every path of the Ingress rather than serving it uninspected; the
// WAF's other keys are reported.
const (
	AppProtectPrefix                     = "appprotect.f5.com"
	AppProtectDoSPrefix                  = "appprotectdos.f5.com"
	FamilyAppProtect    AnnotationFamily = "app-protect"
	FamilyAppProtectDoS AnnotationFamily = "app-protect-dos"
)

// appProtectRows are every appprotect.f5.com and appprotectdos.f5.com row
// of the registry.
var appProtectRows = func() []Annotation {
	const waf = "needs NGINX App Protect WAF (NGINX Plus); use enable-modsecurity with the OWASP Core Rule Set"
	enable := Annotation{Family: FamilyAppProtect, Name: "app-protect-enable", Kind: "Ingress", Group: "waf",
		Status: AnnotationFailClosed, Instead: waf, Off: parsesFalse}
	out := []Annotation{enable}
	for _, r := range rows(FamilyAppProtect, "Ingress", "waf", AnnotationNotYetSupported, "app-protect-policy",
		"app-protect-security-log-enable", "app-protect-security-log", "app-protect-security-log-destination") {
		r.Instead = waf + "; read only with app-protect-enable"
		out = append(out, r)
	}
	dos := rows(FamilyAppProtectDoS, "Ingress", "dos", AnnotationFailClosed, "app-protect-dos-resource")
	dos[0].Instead = "needs NGINX App Protect DoS (NGINX Plus); limit-rps, limit-connections and limit-whitelist limit clients"
	return append(out, dos...)
}()

// parsesFalse: a boolean annotation set to false asks for nothing. A value
// that is not a boolean counts as asking, so it closes.
func parsesFalse(v string) bool {
	on, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && !on
}
