package render

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/causeway/causeway/internal/model"
)

// GeoIP2 (use-geoip2): the geoip2 blocks of nginx.conf
// (templates/nginx.conf.tmpl, "GeoIP2").

// GeoIP2Database is a MaxMind database the controller found at start: an
// edition of model.GeoIP2Editions and its file.
type GeoIP2Database struct {
	Edition, Path string
}

type geoIP2View struct {
	Databases []geoIP2DatabaseView
	// Empty are the variables no database sets, defined as "".
	Empty []string
}

type geoIP2DatabaseView struct {
	Path, AutoReload string
	Vars             []geoIP2VarView
}

// geoIP2VarView is one variable: its name, its quoted default ("" for
// none) and the record path's words.
type geoIP2VarView struct {
	Name, Default, Path string
}

// geoIP2Word is a word of a record path or a default, as the catalogue
// (model.GeoIP2Editions) writes them.
var geoIP2Word = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// planGeoIP2 defines ingress-nginx's $geoip2_* variables when use-geoip2
// is on or the access log reads one: from the databases of p (first
// edition first) when use-geoip2 is on and nginx has the module, and as
// empty strings where none sets them, so that snippets and the log
// format always find them.
func (v *mainView) planGeoIP2(p Params) error {
	c := v.Config
	if !c.GeoIP2.Enabled && !logReadsGeoIP2(c.LogFormat) {
		return nil
	}
	g := &geoIP2View{}
	defined := map[string]bool{}
	if c.GeoIP2.Enabled && p.GeoIP2Module != "" && len(p.GeoIP2Databases) > 0 {
		q, err := Quote(p.GeoIP2Module)
		if err != nil {
			return fmt.Errorf("geoip2 module path: %w", err)
		}
		v.LoadModules = append(v.LoadModules, q)
		for _, e := range model.GeoIP2Editions {
			i := slices.IndexFunc(p.GeoIP2Databases, func(d GeoIP2Database) bool { return d.Edition == e.ID })
			if i < 0 {
				continue
			}
			db, err := planGeoIP2Database(p.GeoIP2Databases[i].Path, e, c.GeoIP2.AutoReload.Minutes(), defined)
			if err != nil {
				return fmt.Errorf("geoip2 database %s: %w", e.ID, err)
			}
			g.Databases = append(g.Databases, db)
		}
	}
	for _, n := range model.GeoIP2VariableNames() {
		if !defined[n] {
			if !variableName(n) {
				return fmt.Errorf("geoip2 variable %q", n)
			}
			g.Empty = append(g.Empty, n)
		}
	}
	v.GeoIP2 = g
	return nil
}

func planGeoIP2Database(path string, e model.GeoIP2Edition, reload float64, defined map[string]bool) (geoIP2DatabaseView, error) {
	var db geoIP2DatabaseView
	var err error
	if db.Path, err = Quote(path); err != nil {
		return db, err
	}
	if reload >= 1 {
		db.AutoReload = strconv.Itoa(int(reload)) + "m"
	}
	for _, gv := range e.Variables {
		if defined[gv.Name] {
			continue
		}
		if !variableName(gv.Name) {
			return db, fmt.Errorf("variable %q", gv.Name)
		}
		vv := geoIP2VarView{Name: gv.Name}
		for i, w := range gv.Path {
			if !geoIP2Word.MatchString(w) {
				return db, fmt.Errorf("record path word %q", w)
			}
			if i > 0 {
				vv.Path += " "
			}
			vv.Path += w
		}
		if gv.Default != "" {
			if !geoIP2Word.MatchString(gv.Default) {
				return db, fmt.Errorf("default %q", gv.Default)
			}
			vv.Default = gv.Default
		}
		defined[gv.Name] = true
		db.Vars = append(db.Vars, vv)
	}
	return db, nil
}

// logReadsGeoIP2 reports whether the access log prints a $geoip2_*
// variable.
func logReadsGeoIP2(f model.LogFormat) bool {
	names := model.GeoIP2VariableNames()
	return slices.ContainsFunc(f, func(p model.LogFormatPart) bool { return slices.Contains(names, p.Variable) })
}
