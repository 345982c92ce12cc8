package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/modsec"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/runtime"
)

// modsecMutations put a hostile value into every user-controlled string of
// a location's ModSecurity, bypassing the parser, to prove the renderer
// checks every directive again: the transaction id reaches nginx's
// configuration, the rest ModSecurity's rules files.
var modsecMutations = map[string]func(v string) *model.ModSecurity{
	"transaction id": func(v string) *model.ModSecurity {
		return &model.ModSecurity{TransactionID: model.Template{{Literal: v}}}
	},
	"setting argument": func(v string) *model.ModSecurity {
		return secRules(model.SecDirective{Setting: &model.SecSetting{Name: "SecAuditLogRelevantStatus", Args: []string{v}}})
	},
	"operator argument": func(v string) *model.ModSecurity {
		return secRules(model.SecDirective{Rule: &model.SecRule{Variables: []model.SecVariable{{Name: "ARGS"}},
			Operator: &model.SecOperator{Name: "rx", Arg: v}, Actions: []model.SecAction{{Name: "id", Value: "10"}, {Name: "phase", Value: "2"}, {Name: "deny"}}}})
	},
	"action message": func(v string) *model.ModSecurity {
		return secRules(model.SecDirective{Rule: &model.SecRule{Actions: []model.SecAction{{Name: "id", Value: "11"}, {Name: "phase", Value: "1"},
			{Name: "pass"}, {Name: "msg", Value: v}}}})
	},
	"variable key": func(v string) *model.ModSecurity {
		return secRules(model.SecDirective{UpdateTarget: &model.SecUpdateTarget{By: model.SecByID, ID: 12,
			Targets: []model.SecVariable{{Name: "ARGS", Key: v, Exclude: true}}}})
	},
	"removed tag": func(v string) *model.ModSecurity {
		return secRules(model.SecDirective{Remove: &model.SecRemove{By: model.SecByTag, Text: v}})
	},
	"marker": func(v string) *model.ModSecurity {
		return secRules(model.SecDirective{Marker: v})
	},
}

func secRules(d model.SecDirective) *model.ModSecurity {
	return &model.ModSecurity{Rules: &model.SecRules{Directives: []model.SecDirective{d}}}
}

// modsecParams are the render parameters of a plane, with Debian's
// ModSecurity module.
func modsecParams(plane string) render.Params {
	p := renderParamsFor(plane)
	p.ModSecurity = &render.ModSecurity{Module: dataPlane.modules + "/" + runtime.ModSecurityModule}
	return p
}

// TestHostileModSecurityValues renders every hostile value in every string
// of a location's ModSecurity: each render fails, or gives the directive
// structure of the benign value (nginx's and ModSecurity's) and a
// configuration that nginx -t, loading ModSecurity, accepts.
func TestHostileModSecurityValues(t *testing.T) {
	t.Parallel()
	requireModule(t, runtime.ModSecurityModule)
	for _, plane := range dataPlanes {
		for field, rules := range modsecMutations {
			withRules := func(v string) *model.Model {
				m := baseModel(t)
				m.Servers[1].Locations[0].Policy = &model.Policy{ModSecurity: rules(v)}
				return m
			}
			benign, err := render.Render(withRules("benign"), modsecParams(plane))
			if err != nil {
				t.Fatalf("%s %s: benign value: %v", plane, field, err)
			}
			baseline := skeleton(t, benign.Files)
			for i, v := range hostile {
				t.Run(fmt.Sprintf("%s/%s/%d", plane, field, i), func(t *testing.T) {
					t.Parallel()
					m := withRules(v)
					res, err := render.Render(m, modsecParams(plane))
					if err != nil {
						return // refused: safe
					}
					if got := skeleton(t, res.Files); got != baseline {
						t.Fatalf("value %q in %s changed the directive structure:\n%s", v, field, diffLines(baseline, got))
					}
					nginxTest(t, res.Files, m)
				})
			}
		}
	}
}

// secDirectives is the skeleton of a ModSecurity rules file: each
// directive's name, a line each (comments left out). A value that broke
// out of its quotes would start a directive of its own.
func secDirectives(conf string) string {
	var b strings.Builder
	for _, line := range strings.Split(conf, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, " ")
		b.WriteString(name + "\n")
	}
	return b.String()
}

// TestModSecurityCorpusLoads: every snippet of internal/modsec's corpus
// (what people write: exclusions, rules of their own, ingress-nginx's
// documented ConfigMap snippet) renders into rules that nginx -t, loading
// ModSecurity and Debian's CRS, accepts: a location's as a location's
// own rules, configmap-*.conf as the ConfigMap's.
func TestModSecurityCorpusLoads(t *testing.T) {
	t.Parallel()
	requireModule(t, runtime.ModSecurityModule)
	crs, _ := filepath.Glob(filepath.Join(runtime.DefaultCRSDir, "rules", "*.conf"))
	if len(crs) == 0 {
		t.Fatalf("no CRS in %s; run hack/install-deps.sh", runtime.DefaultCRSDir)
	}
	paths, err := filepath.Glob("../../internal/modsec/testdata/corpus/*.conf")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rules, err := modsec.Parse(string(src), modsec.Options{Reserved: []model.SecIDRange{model.SecCRSIDs}})
			if err != nil {
				t.Fatal(err)
			}
			m := baseModel(t)
			ms := &model.ModSecurity{CRS: true}
			if strings.HasPrefix(filepath.Base(p), "configmap-") {
				m.Config.ModSecurity = model.ModSecurityConfig{Enabled: true, Rules: rules}
			} else {
				ms.Rules = rules
			}
			m.Servers[1].Locations[0].Policy = &model.Policy{ModSecurity: ms}
			params := modsecParams("plain")
			params.ModSecurity.CRS = crs
			res, err := render.Render(m, params)
			if err != nil {
				t.Fatal(err)
			}
			nginxTest(t, res.Files, m)
		})
	}
}
