package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Response pages (NGINX Ingress Controller's errorPages): error_page
// sends a location's responses of some statuses to a redirect, or to a
// named location that answers with a fixed body. The named location
// answers "return 0": the status stays the one error_page gives (the
// original, or the page's own with "=code").

type responsePageView struct {
	// Codes are the statuses; Override is "=code " or ""; Target the
	// quoted URL or named location.
	Codes, Override, Target string
}

// responseLocationView is a named location answering a fixed body.
type responseLocationView struct {
	Name, Type, Text string
	Headers          []addHeaderView
	Inherited        []headerLine
}

// planResponsePages prints l's response pages; their named locations are
// shared by the server's locations with the same content.
func (sp *serverPlan) planResponsePages(v *policyView, lv *locationView, l *model.Location) error {
	for _, p := range l.Policy.ResponsePages {
		var codes []string
		for _, c := range p.Codes {
			if c < 300 || c > 599 {
				return fmt.Errorf("response page status %d is outside 300-599", c)
			}
			codes = append(codes, strconv.Itoa(c))
		}
		if len(codes) == 0 {
			return fmt.Errorf("response page without statuses")
		}
		pv := responsePageView{Codes: strings.Join(codes, " ")}
		var err error
		switch {
		case p.Redirect != nil:
			switch p.Redirect.Code {
			case 301, 302, 303, 307, 308:
			default:
				return fmt.Errorf("response page redirect code %d", p.Redirect.Code)
			}
			pv.Override = "=" + strconv.Itoa(p.Redirect.Code) + " "
			if p.Redirect.Template != nil {
				pv.Target, err = quoteTemplate(p.Redirect.Template)
			} else {
				pv.Target, err = Quote(p.Redirect.URL)
			}
		case p.Return != nil:
			if c := p.Return.Status; c != 0 {
				if c < 200 || c > 599 || c >= 300 && c < 400 {
					return fmt.Errorf("response page status %d", c)
				}
				pv.Override = "=" + strconv.Itoa(c) + " "
			}
			pv.Target, err = sp.responseLocation(p, sp.headerScope(l.Policy))
		default:
			return fmt.Errorf("response page with neither redirect nor return")
		}
		if err != nil {
			return fmt.Errorf("response page: %w", err)
		}
		v.ResponsePages = append(v.ResponsePages, pv)
	}
	v.InterceptErrors = lv.Pass != ""
	return nil
}

// responseLocation adds (once) the named location answering p's body and
// returns its name.
func (sp *serverPlan) responseLocation(p model.ResponsePage, scope headerScope) (string, error) {
	typ := p.Return.Type
	if typ == "" {
		typ = "text/html" // NGINX Ingress Controller's default for error pages
	}
	if !contentTypeToken(typ) {
		return "", fmt.Errorf("type %q", typ)
	}
	rl := responseLocationView{}
	var err error
	if rl.Type, err = Quote(typ); err != nil {
		return "", err
	}
	if rl.Text, err = quoteTextTemplate(p.Return.Body); err != nil {
		return "", err
	}
	hs := slices.Clone(p.Headers)
	var own []model.Header
	for i := range hs {
		hs[i].Always = true
		own = append(own, model.Header{Name: hs[i].Name})
	}
	if rl.Headers, err = templateHeaders(hs); err != nil {
		return "", err
	}
	// The location answers for several routes: those inheriting
	// differently get one each.
	hash := fmt.Appendf(nil, "%q %q %v", rl.Type, rl.Text, rl.Headers)
	if scope.http {
		rl.Inherited = sp.inherited(scope, own, true)
	} else {
		rl.Inherited = sp.inherited(scope, own, len(hs) > 0)
		hash = append(hash, " no-inherit"...)
	}
	sum := sha256.Sum256(hash)
	rl.Name = "@causeway_page_" + hex.EncodeToString(sum[:6])
	if !sp.named[rl.Name] {
		sp.named[rl.Name] = true
		sp.v.ResponseLocations = append(sp.v.ResponseLocations, rl)
	}
	return rl.Name, nil
}
