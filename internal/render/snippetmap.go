package render

import (
	"fmt"

	"github.com/causeway/causeway/internal/model"
)

// The maps of the ConfigMap's http-snippet (model.SnippetMap), printed at
// nginx's http level (templates/nginx.conf.tmpl, "http-snippet maps").

type snippetMapView struct {
	// Source and the entries' values are quoted templates; Variable is
	// "$name".
	Source, Variable string
	Default          string
	Entries          []snippetMapEntry
}

type snippetMapEntry struct{ Key, Value string }

// planSnippetMaps prints the maps of the snippets that apply at the http
// level, each value re-checked against the model's grammar.
func planSnippetMaps(ss ...*model.Snippet) ([]snippetMapView, error) {
	var out []snippetMapView
	seen := map[string]bool{}
	for _, s := range ss {
		if s == nil {
			continue
		}
		for _, m := range s.Maps {
			if !variableName(m.Variable) || seen[m.Variable] {
				return nil, fmt.Errorf("http-snippet: map variable %q", m.Variable)
			}
			seen[m.Variable] = true
			v, err := planSnippetMap(m)
			if err != nil {
				return nil, fmt.Errorf("http-snippet: map $%s: %w", m.Variable, err)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

func planSnippetMap(m model.SnippetMap) (snippetMapView, error) {
	v := snippetMapView{Variable: "$" + m.Variable}
	var err error
	if v.Source, err = quoteTemplate(m.Source); err != nil {
		return v, err
	}
	if m.HasDefault {
		if v.Default, err = quoteTemplate(m.Default); err != nil {
			return v, err
		}
	}
	for _, e := range m.Entries {
		key := e.Key
		switch e.Op {
		case "":
			if _, err := model.ParseHeaderValue(key); err != nil || key != "" && (key[0] == '~' || key[0] == '\\') || mapKeyWords[key] {
				return v, fmt.Errorf("key %q is not literal text", key)
			}
		case "~", "~*":
			if _, err := model.ParseHeaderRegex(key); err != nil {
				return v, fmt.Errorf("key %q: %w", key, err)
			}
			key = e.Op + key
		default:
			return v, fmt.Errorf("key operator %q", e.Op)
		}
		// A quoted key keeps its spaces; nginx removes the quotes before it
		// looks for a leading "~".
		q, err := Quote(key)
		if err != nil {
			return v, err
		}
		val, err := quoteTemplate(e.Value)
		if err != nil {
			return v, err
		}
		v.Entries = append(v.Entries, snippetMapEntry{Key: q, Value: val})
	}
	return v, nil
}

// mapKeyWords are map's own parameters, which a key may not be.
var mapKeyWords = map[string]bool{"default": true, "hostnames": true, "include": true, "volatile": true}
