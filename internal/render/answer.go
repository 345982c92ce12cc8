package render

import (
	"fmt"

	"github.com/causeway/causeway/internal/model"
)

// A location that answers by itself (return, redirect) and also checks
// the client (access lists, basic, digest or external authentication,
// rate and connection limits) must check first. nginx's return runs in
// the rewrite phase, before the access phase: written plainly, the answer
// would go out to every client and the checks would never run. So the
// location keeps its checks and hands the answer over with try_files,
// whose phase comes after them, to a named location that answers with
// what the location would have sent (headers, type, body), without the
// checks. NGINX Ingress Controller has the same order for a VirtualServer
// route's return and redirect (through an internal 418).

// answerView is a named location that gives a checked location's answer.
type answerView struct {
	Name string
	Loc  locationView
}

// answerProbe is the file try_files looks for before it hands over: one
// that does not exist under nginx's default root.
const answerProbe = "/.causeway-no-such-file"

// deferAnswer moves lv's answer to a named location when l checks the
// client (model.Policy.ChecksClient).
func (sp *serverPlan) deferAnswer(lv *locationView, l *model.Location) {
	if (lv.Return == 0 && lv.RedirectCode == 0) || lv.Policy == nil || !l.Policy.ChecksClient() {
		return
	}
	answer := *lv
	answer.Policy = withoutChecks(lv.Policy)
	answer.Modifier, answer.Path = "", ""
	name := fmt.Sprintf("@causeway-answer-%d", len(sp.v.Answers))
	sp.v.Answers = append(sp.v.Answers, answerView{Name: name, Loc: answer})
	lv.Return, lv.ReturnText, lv.ReturnType, lv.RedirectCode, lv.RedirectURL, lv.RedirectIf = 0, "", "", 0, "", ""
	lv.Answer = name
}

// withoutChecks is p without nginx's client checks (access lists, basic,
// digest and external authentication, limits), for a named location
// that answers once they passed (ModSecurity too: it ran in the location).
func withoutChecks(p *policyView) *policyView {
	pol := *p
	pol.Deny, pol.Allow, pol.SatisfyAny = nil, nil, false
	pol.AuthRealm, pol.AuthFile, pol.DigestRealm, pol.DigestFile = "", "", "", ""
	pol.ExtAuth, pol.Limits, pol.ModSecurity = nil, nil, nil
	pol.LimitRate, pol.LimitRateAfter = "", ""
	return &pol
}
