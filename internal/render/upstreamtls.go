package render

import (
	"cmp"
	"fmt"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

// planSSL prints the TLS client towards HTTPS and GRPCS backends. The
// secret's files (layout.ProxyCertFile, layout.ProxyCAFile) are read when
// nginx loads its configuration, so Render hashes their content into the
// version: a changed secret reloads.
func (sp *serverPlan) planSSL(t *model.UpstreamTLS) (*sslView, error) {
	v := &sslView{Verify: t.Verify, ServerName: t.ServerName}
	if t.VerifyDepth < 0 {
		return nil, fmt.Errorf("negative verify depth %d", t.VerifyDepth)
	}
	v.VerifyDepth = t.VerifyDepth
	var err error
	if t.Name != "" {
		if v.Name, err = Quote(t.Name); err != nil {
			return nil, err
		}
	}
	if v.Protocols, err = fixedTokens("TLS protocol", t.Protocols, sslProtocols); err != nil {
		return nil, err
	}
	if t.Ciphers != "" {
		if v.Ciphers, err = ciphers(t.Ciphers); err != nil {
			return nil, err
		}
	}
	if t.Secret != "" {
		s := sp.proxySecret(t.Secret)
		if s == nil {
			return nil, fmt.Errorf("proxy secret %q is not in the model", t.Secret)
		}
		ns, name, err := secretParts(t.Secret)
		if err != nil {
			return nil, err
		}
		if len(s.Cert) > 0 && len(s.PrivateKey) > 0 {
			if v.Cert, err = Quote(sp.rc.p.StateDir.Path(layout.ProxyCertFile(ns, name))); err != nil {
				return nil, err
			}
		}
		if len(s.CA) > 0 {
			if v.Trusted, err = Quote(sp.rc.p.StateDir.Path(layout.ProxyCAFile(ns, name))); err != nil {
				return nil, err
			}
		}
	}
	if t.CASecret != "" {
		s := sp.proxySecret(t.CASecret)
		if s == nil || len(s.CA) == 0 {
			return nil, fmt.Errorf("proxy secret %q holds no CA bundle in the model", t.CASecret)
		}
		ns, name, err := secretParts(t.CASecret)
		if err != nil {
			return nil, err
		}
		if v.Trusted, err = Quote(sp.rc.p.StateDir.Path(layout.ProxyCAFile(ns, name))); err != nil {
			return nil, err
		}
	}
	if err := sp.planCA(t, v); err != nil {
		return nil, err
	}
	if v.Verify && v.Trusted == "" {
		// nginx refuses the whole configuration otherwise.
		return nil, fmt.Errorf("backend certificate verification without a CA bundle")
	}
	return v, nil
}

func (sp *serverPlan) proxySecret(key string) *model.ProxySecret {
	if sp.rc.proxySecrets == nil {
		sp.rc.proxySecrets = map[string]*model.ProxySecret{}
		for _, s := range sp.rc.m.ProxySecrets {
			sp.rc.proxySecrets[s.Key()] = s
		}
	}
	return sp.rc.proxySecrets[key]
}

// planCA prints the CA bundle of a ConfigMap (layout.ProxyConfigMapCAFile)
// or the system's, either in place of a secret's.
func (sp *serverPlan) planCA(t *model.UpstreamTLS, v *sslView) error {
	var path string
	switch {
	case t.CAConfigMap != "" && t.SystemCAs:
		return fmt.Errorf("both a ConfigMap's and the system's CA bundle")
	case t.CAConfigMap != "":
		c := sp.proxyCA(t.CAConfigMap)
		if c == nil || len(c.CA) == 0 {
			return fmt.Errorf("ConfigMap CA bundle %q is not in the model", t.CAConfigMap)
		}
		ns, name, err := secretParts(t.CAConfigMap)
		if err != nil {
			return err
		}
		path = sp.rc.p.StateDir.Path(layout.ProxyConfigMapCAFile(ns, name))
	case t.SystemCAs:
		path = cmp.Or(sp.rc.p.SystemCAFile, DefaultSystemCAFile)
	default:
		return nil
	}
	var err error
	v.Trusted, err = Quote(path)
	return err
}

func (sp *serverPlan) proxyCA(key string) *model.ProxyCA {
	for _, c := range sp.rc.m.ProxyCAs {
		if c.Key() == key {
			return c
		}
	}
	return nil
}
