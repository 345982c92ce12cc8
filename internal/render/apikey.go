package render

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

// API key authentication (model.APIKeyAuth), checked by causeway.apikey in
// the access phase. The location sets two variables the Lua module reads:
// the hash file's path and the names of the nginx variables that hold the
// supplied key ("http_x_api_key arg_apikey"), both checked against the
// model's grammars again and quoted; no user string reaches Lua source.

// apiKeyView is what a location with API key authentication prints.
type apiKeyView struct {
	// File is the quoted path of the "client:sha256hex" file; Vars the
	// quoted, space-separated variable names.
	File, Vars string
}

// planAPIKey prints a's file and variables into v.
func (sp *serverPlan) planAPIKey(v *policyView, a *model.APIKeyAuth) error {
	if !sp.rc.lua {
		return errors.New("API key authentication needs the Lua data plane")
	}
	if v.DigestFile != "" {
		return errors.New("a location cannot check both digest credentials and API keys")
	}
	i := slices.IndexFunc(sp.rc.m.AuthFiles, func(f *model.AuthFile) bool { return f.Key() == a.File })
	if i < 0 || !sp.rc.m.AuthFiles[i].APIKey {
		return fmt.Errorf("API key file %q is not in the model", a.File)
	}
	if len(a.Headers)+len(a.Query) == 0 {
		return errors.New("API key authentication without a header or query argument")
	}
	var vars []string
	for _, h := range a.Headers {
		if _, err := model.ParseAPIKeyHeader(h); err != nil {
			return fmt.Errorf("API key header: %w", err)
		}
		vars = append(vars, model.APIKeyVariable(h))
	}
	for _, q := range a.Query {
		if _, err := model.ParseQueryParam(q); err != nil {
			return fmt.Errorf("API key query argument: %w", err)
		}
		vars = append(vars, "arg_"+q)
	}
	f := sp.rc.m.AuthFiles[i]
	path, err := Quote(sp.rc.p.StateDir.Path(layout.AuthFile(f.Namespace, f.Name, f.Kind())))
	if err != nil {
		return err
	}
	q, err := Quote(strings.Join(vars, " "))
	if err != nil {
		return err
	}
	v.APIKey = &apiKeyView{File: path, Vars: q}
	return nil
}
