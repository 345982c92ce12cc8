package nic

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// APIKey is an apiKey policy: where clients put their key, and the
// nginx.org/apikey Secret (client ID to key) in the Policy's namespace,
// which the builder resolves into the model's hashed key file.
type APIKey struct {
	Headers, Query []string
	Secret         string
}

// maxAPIKeyNames bounds suppliedIn's names: each is read on every
// request.
const maxAPIKeyNames = 16

func (t *translator) apiKey(a *nicv1.APIKey) (*APIKey, error) {
	const f = "spec.apiKey."
	if a.ClientSecret == "" {
		return nil, errors.New(f + "clientSecret is required")
	}
	name, err := t.sameNamespace(f+"clientSecret", a.ClientSecret)
	if err != nil {
		return nil, err
	}
	if err := model.ValidateObjectName("Secret", name); err != nil {
		return nil, fmt.Errorf(f+"clientSecret: %v", err)
	}
	if a.SuppliedIn == nil || len(a.SuppliedIn.Header)+len(a.SuppliedIn.Query) == 0 {
		return nil, errors.New(f + "suppliedIn must name at least one header or query argument")
	}
	if n := len(a.SuppliedIn.Header) + len(a.SuppliedIn.Query); n > maxAPIKeyNames {
		return nil, fmt.Errorf(f+"suppliedIn names %d headers and query arguments, more than %d", n, maxAPIKeyNames)
	}
	out := &APIKey{Secret: name}
	for i, h := range a.SuppliedIn.Header {
		if _, err := model.ParseAPIKeyHeader(h); err != nil {
			return nil, fmt.Errorf(f+"suppliedIn.header[%d]: %v", i, err)
		}
		if slices.ContainsFunc(out.Headers, func(o string) bool { return strings.EqualFold(o, h) }) {
			return nil, fmt.Errorf(f+"suppliedIn.header[%d] %q is listed twice", i, h)
		}
		out.Headers = append(out.Headers, h)
	}
	for i, q := range a.SuppliedIn.Query {
		if _, err := model.ParseQueryParam(q); err != nil {
			return nil, fmt.Errorf(f+"suppliedIn.query[%d] %q: %v", i, model.Truncate(q), err)
		}
		// nginx matches argument names without regard to case.
		if slices.ContainsFunc(out.Query, func(o string) bool { return strings.EqualFold(o, q) }) {
			return nil, fmt.Errorf(f+"suppliedIn.query[%d] %q is listed twice", i, q)
		}
		out.Query = append(out.Query, q)
	}
	return out, nil
}
