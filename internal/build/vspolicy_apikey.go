package build

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// This file resolves apiKey Policies into the model's API key
// authentication, whose hashed key file the Local Secret Store writes
// (0600, only while referenced) and the Lua data plane checks; and
// applies hsts Policies to their VirtualServer's server. A Policy that
// cannot be applied makes the routes answer 500, never open.

// secretTypeAPIKey is NGINX Ingress Controller's Secret type of API keys.
const secretTypeAPIKey corev1.SecretType = "nginx.org/apikey"

// errNoLua marks a Policy that needs the Lua data plane.
var errNoLua = errors.New("needs the Lua data plane, which this nginx cannot run")

// apiKeyAuth resolves an apiKey Policy's Secret.
func (b *builder) apiKeyAuth(p *nic.Policy) (*model.APIKeyAuth, error) {
	if !b.opts.LuaAvailable {
		return nil, fmt.Errorf("%w: apiKey %w", errPolicyUse, errNoLua)
	}
	a := p.APIKey
	f := &model.AuthFile{Namespace: p.Ref.Namespace, Name: a.Secret, APIKey: true}
	key := f.Key()
	if _, ok := b.authFiles[key]; !ok {
		name := f.Namespace + "/" + f.Name
		s := b.secretsIn[name]
		if s == nil {
			return nil, fmt.Errorf("secret %s %w", name, errNotFound)
		}
		if s.Type != secretTypeAPIKey {
			return nil, fmt.Errorf("secret %s is of type %q, not %s", name, s.Type, secretTypeAPIKey)
		}
		data, err := model.ParseAPIKeys(s.Data)
		if err != nil {
			return nil, fmt.Errorf("secret %s: %w", name, err)
		}
		f.Data = data
		b.authFiles[key] = f
	}
	return &model.APIKeyAuth{Headers: a.Headers, Query: a.Query, File: key}, nil
}
