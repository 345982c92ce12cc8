package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

// ModSecurity, with the Core Rule Set, takes about 0.1 s and 16 MB to
// load, every time a rules file is read: loaded by each location that
// uses it, a thousand locations would take minutes and gigabytes. So the
// rules are loaded once, at nginx's http level (modsecurity/main.conf:
// the base configuration, the ConfigMap's rules, the CRS when any
// location runs it), and every location inherits them, merged (about
// 16 KB per location). A location then says "modsecurity on" and adds
// its own rules from a small file of its own (modsecurity/location-*.conf),
// which ModSecurity runs ahead of the inherited ones and whose settings
// (SecRuleEngine On) win. A location that does not run the CRS while
// others do removes it there (SecRuleRemoveById over the CRS's ids).

// ModSecurity is what the data plane offers for ModSecurity.
type ModSecurity struct {
	// Module is the absolute path of ngx_http_modsecurity_module.so.
	Module string
	// CRS are the absolute paths of the OWASP Core Rule Set's rules
	// files, in the order they load; nil when the rules are not
	// installed.
	CRS []string
	// UnicodeMapping is the absolute path of ModSecurity's
	// unicode.mapping; "" when it is not installed.
	UnicodeMapping string
}

// crsSetupVersion is what the CRS's initialization (rule 901001) checks
// its setup for: Debian bookworm's modsecurity-crs is 3.3.
const crsSetupVersion = "334"

// modsecPlan is ModSecurity for one render.
type modsecPlan struct {
	// crs: the http level loads the Core Rule Set.
	crs bool
	// files are main.conf and the locations' files.
	files Files
	// load is the quoted module path, mainRules the quoted main.conf.
	load, mainRules string
}

// modsecMainView feeds modsecurity.conf.tmpl.
type modsecMainView struct {
	// Items are printed in order: the base configuration, the CRS, or a
	// line of the ConfigMap's rules.
	Items []modsecItem
	// UnicodeMapping is a checked absolute path ("" for none).
	UnicodeMapping string
}

type modsecItem struct {
	Base, CRS bool
	Line      string
	// Rules are CRS's files, and SetupVersion the version its setup
	// declares, when CRS.
	Rules        []string
	SetupVersion string
}

// planModSecurity plans main.conf when any location runs ModSecurity;
// nil when none does.
func planModSecurity(m *model.Model, p Params) (*modsecPlan, error) {
	var on, crs bool
	for _, srv := range m.Servers {
		for _, l := range append(srv.Locations[:len(srv.Locations):len(srv.Locations)], srv.Default) {
			if l != nil && l.Policy != nil && l.Policy.ModSecurity != nil {
				on, crs = true, crs || l.Policy.ModSecurity.CRS
			}
		}
	}
	if !on {
		return nil, nil
	}
	ms := p.ModSecurity
	if ms == nil || ms.Module == "" {
		return nil, fmt.Errorf("a location runs ModSecurity, and nginx has no ModSecurity module")
	}
	g := m.Config.ModSecurity
	if g.Enabled && (g.CRS || g.Rules.Includes(model.SecIncludeCRS)) {
		crs = true
	}
	if crs && len(ms.CRS) == 0 {
		return nil, fmt.Errorf("a location runs the OWASP Core Rule Set, and its rules are not installed")
	}
	plan := &modsecPlan{crs: crs, files: Files{}}
	var err error
	if plan.load, err = Quote(ms.Module); err != nil {
		return nil, fmt.Errorf("ModSecurity module path: %w", err)
	}
	if plan.mainRules, err = Quote(p.StateDir.Path(layout.ModSecurityMain)); err != nil {
		return nil, err
	}
	v := modsecMainView{}
	if ms.UnicodeMapping != "" {
		if v.UnicodeMapping, err = secPath(ms.UnicodeMapping); err != nil {
			return nil, err
		}
	}
	var rules []string
	for _, f := range ms.CRS {
		q, err := secPath(f)
		if err != nil {
			return nil, err
		}
		rules = append(rules, q)
	}
	// The ConfigMap's rules replace the base configuration, as in
	// ingress-nginx, unless they include it; the CRS loads where they
	// include it, else after them.
	crsItem := modsecItem{CRS: true, Rules: rules, SetupVersion: crsSetupVersion}
	if g.Enabled && g.Rules != nil {
		crsDone := false
		for i, d := range g.Rules.Directives {
			switch d.Include {
			case model.SecIncludeBase:
				v.Items = append(v.Items, modsecItem{Base: true})
				continue
			case model.SecIncludeCRS:
				if crs {
					v.Items, crsDone = append(v.Items, crsItem), true
				}
				continue
			}
			line, err := secLine(d)
			if err != nil {
				return nil, fmt.Errorf("modsecurity-snippet: directive %d: %w", i+1, err)
			}
			v.Items = append(v.Items, modsecItem{Line: line})
		}
		if crs && !crsDone {
			v.Items = append(v.Items, crsItem)
		}
	} else {
		v.Items = append(v.Items, modsecItem{Base: true})
		if crs {
			v.Items = append(v.Items, crsItem)
		}
	}
	if plan.files[layout.ModSecurityMain], err = execute("modsecurity.conf.tmpl", &v); err != nil {
		return nil, err
	}
	return plan, nil
}

// secPath checks a path for a rules file: absolute, of the bytes an
// argument may hold unquoted.
func secPath(p string) (string, error) {
	if !strings.HasPrefix(p, "/") || !secBare(p) || strings.Contains(p, "..") {
		return "", fmt.Errorf("ModSecurity file path %q: want an absolute path of letters, digits and ._-/", p)
	}
	return p, nil
}

// modsecView is what a location prints of ModSecurity.
type modsecView struct {
	// Rules is the quoted path of the location's own rules file; "" for
	// none.
	Rules string `json:",omitempty"`
	// TransactionID is modsecurity_transaction_id's quoted value.
	TransactionID string `json:",omitempty"`
}

// planModSecurityLocation plans a location's ModSecurity and adds its
// rules file to the plan.
func (plan *modsecPlan) location(ms *model.ModSecurity, dir layout.Dir) (*modsecView, error) {
	if plan == nil {
		return nil, fmt.Errorf("a location runs ModSecurity, and none was planned")
	}
	v := &modsecView{}
	var lines []string
	if plan.crs && !ms.CRS {
		lines = append(lines, fmt.Sprintf("SecRuleRemoveById %d-%d", model.SecCRSIDs.Lo, model.SecCRSIDs.Hi))
	}
	// A location's Includes name what it inherits from the http level.
	own, err := SecRulesText(ms.Rules)
	if err != nil {
		return nil, fmt.Errorf("modsecurity-snippet: %w", err)
	}
	lines = append(lines, own...)
	if len(lines) > 0 {
		text := []byte("# Generated by Causeway: a location's ModSecurity rules, ahead of modsecurity/main.conf's.\n" + strings.Join(lines, "\n") + "\n")
		sum := sha256.Sum256(text)
		rel := layout.ModSecurityLocationFile(hex.EncodeToString(sum[:8]))
		plan.files[rel] = text
		if v.Rules, err = Quote(dir.Path(rel)); err != nil {
			return nil, err
		}
	}
	if len(ms.TransactionID) > 0 {
		if v.TransactionID, err = quoteTemplate(ms.TransactionID); err != nil {
			return nil, fmt.Errorf("modsecurity-transaction-id: %w", err)
		}
	}
	return v, nil
}
