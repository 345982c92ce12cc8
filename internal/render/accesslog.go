package render

import (
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// The access log: ingress-nginx's log-format-upstream and its variables.
// nginx.conf defines every variable of model.LogVariables that nginx has
// not (with its value outside any Ingress location); each location sets
// those its format prints, so a format that prints none costs nothing.

// logVar is a variable a location sets for the access log: Name is from
// model.LogVariables, Value is quoted (see quoteLogValue), or the map
// variable that gives it per host in a shared server.
type logVar struct{ Name, Value string }

// logVarDefaults are the values of ingress-nginx's per-location log
// variables where no location sets them (server-level redirects, the
// status server), in the order nginx.conf defines them. $req_id has a map
// of its own.
var logVarDefaults = []logVar{
	{"proxy_upstream_name", `"-"`},
	{"proxy_alternative_upstream_name", `""`},
	{"namespace", `""`},
	{"ingress_name", `""`},
	{"service_name", `""`},
	{"service_port", `""`},
	{"location_path", `""`},
}

// defaultUpstreamName is ingress-nginx's name for the controller's own
// default backend.
const defaultUpstreamName = "upstream-default-backend"

// dollarVariable holds a literal "$", for log values that contain one.
const dollarVariable = "causeway_dollar"

// LogVariableDefaults and DollarVariable feed nginx.conf.
func (v *mainView) LogVariableDefaults() []logVar { return logVarDefaults }
func (v *mainView) DollarVariable() string        { return dollarVariable }

// LogFormat is the quoted log_format string, after its escape parameter.
func (v *mainView) LogFormat() (string, error) {
	f, err := logFormat(v.Config.LogFormat)
	if err != nil {
		return "", err
	}
	switch {
	case v.Config.LogEscapeNone:
		return "escape=none " + f, nil
	case v.Config.LogEscapeJSON:
		return "escape=json " + f, nil
	}
	return f, nil
}

// AccessLogArgs are the access_log directive's arguments; "" when the
// access log is off.
func (v *mainView) AccessLogArgs() string { return accessLogArgs(v.Config) }

// accessLogArgs are the arguments of the access log's access_log
// directive (the http level's, and the locations' that name the metrics
// log too); "" when the access log is off.
func accessLogArgs(cfg model.Config) string {
	if !cfg.AccessLog {
		return ""
	}
	s := "/dev/stderr causeway"
	if b := cfg.LogParams.Buffer; b != 0 {
		s += " buffer=" + model.FormatSize(b)
	}
	if f := cfg.LogParams.Flush; f != 0 {
		s += " flush=" + model.FormatDuration(f)
	}
	if len(cfg.SkipLogPaths) > 0 {
		s += " if=$causeway_loggable"
	}
	return s
}

// SkipLogPaths are the quoted paths that skip-access-log-urls lists.
func (v *mainView) SkipLogPaths() ([]string, error) {
	out := make([]string, 0, len(v.Config.SkipLogPaths))
	for _, p := range v.Config.SkipLogPaths {
		if p == "" || p[0] != '/' {
			return nil, fmt.Errorf("skip-access-log-urls path %q does not start with /", p)
		}
		q, err := Quote(p)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

// logFormat renders a parsed format as one single-quoted nginx string,
// re-checking what ParseLogFormat accepted: each variable is one of
// model.LogVariables and no literal holds "'", "\", "$", a control or a
// non-ASCII byte, or continues the name of the variable before it.
func logFormat(f model.LogFormat) (string, error) {
	var b strings.Builder
	b.WriteByte('\'')
	afterVar := false
	for _, p := range f {
		switch {
		case p.Variable != "" && p.Literal != "":
			return "", fmt.Errorf("log format part is both literal and variable")
		case p.Variable != "":
			if _, ok := model.LogVariables[p.Variable]; !ok {
				return "", fmt.Errorf("log format variable %q is not allowed", p.Variable)
			}
			b.WriteString("$" + userVariable(p.Variable))
			afterVar = true
		default:
			for i := 0; i < len(p.Literal); i++ {
				c := p.Literal[i]
				if c == '\'' || c == '\\' || c == '$' || c < ' ' || c >= 0x7f {
					return "", fmt.Errorf("log format literal %q holds byte 0x%02x", p.Literal, c)
				}
				if i == 0 && afterVar && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
					return "", fmt.Errorf("log format literal %q would extend the variable before it", p.Literal)
				}
			}
			b.WriteString(p.Literal)
			afterVar = false
		}
	}
	b.WriteByte('\'')
	if b.Len() <= 2 || b.Len() > 4000+2 {
		return "", fmt.Errorf("log format of %d bytes", b.Len()-2)
	}
	return b.String(), nil
}

// quoteLogValue quotes s like Quote, except that a "$" is printed as
// ${causeway_dollar}, a variable holding "$" (regex paths end with one).
func quoteLogValue(s string) (string, error) {
	parts := strings.Split(s, "$")
	for i, p := range parts {
		q, err := Quote(p)
		if err != nil {
			return "", err
		}
		parts[i] = q[1 : len(q)-1]
	}
	out := `"` + strings.Join(parts, "${"+dollarVariable+"}") + `"`
	if len(out) > maxQuoted+2 {
		return "", fmt.Errorf("log value of %d bytes", len(s))
	}
	return out, nil
}

// countLogVariables adds the variables nginx.conf defines for the access
// log to the hash sizes.
func countLogVariables(h *hashStats, skipPaths []string) {
	h.mapped("req_id", 2)
	h.mapped(requestIDAlias, 2)
	for _, v := range logVarDefaults {
		h.mapped(v.Name, 0)
	}
	h.mapped(dollarVariable, 0)
	h.mapped("causeway_loggable", len(skipPaths)+1)
	for _, p := range skipPaths {
		h.longest = max(h.longest, len(p))
	}
}

// planLogVars sets the log variables that the format prints for a location
// that logs, and turns the log off for the catch-all server's own default
// unless enable-access-log-for-default-backend is set.
func (sp *serverPlan) planLogVars(lv *locationView, l *model.Location) error {
	cfg := &sp.rc.m.Config
	own := l.Source == (model.ObjectRef{})
	if own && sp.srv.Host == "" && !cfg.LogDefaultBackend && (lv.Policy == nil || !lv.Policy.AccessLogOff) {
		lv.AccessLogOff = true
	}
	if !cfg.AccessLog || lv.AccessLogOff || lv.Policy != nil && lv.Policy.AccessLogOff {
		return nil
	}
	var ns, svc, port, upstream string
	if p := l.Action.Proxy; p != nil && !p.AnswersOnly() {
		if b := sp.rc.backends[p.Backend]; b != nil {
			ns, svc, port = b.Namespace, b.Service, b.Port
		} else if parts := strings.Split(p.Backend, "/"); len(parts) == 3 {
			ns, svc, port = parts[0], parts[1], parts[2]
		}
		upstream = ns + "-" + svc + "-" + port
	}
	if own {
		upstream, svc, port = defaultUpstreamName, "", ""
	}
	values := []logVar{
		{"proxy_upstream_name", upstream},
		{"namespace", l.Source.Namespace},
		{"ingress_name", l.Source.Name},
		{"service_name", svc},
		{"service_port", port},
	}
	if !own {
		values = append(values, logVar{"location_path", l.Match.Path})
	}
	for _, v := range values {
		if v.Value == "" || !cfg.LogFormat.Uses(v.Name) {
			continue
		}
		q, err := quoteLogValue(v.Value)
		if err != nil {
			return fmt.Errorf("log variable $%s: %w", v.Name, err)
		}
		lv.LogVars = append(lv.LogVars, logVar{Name: v.Name, Value: q})
	}
	return nil
}
