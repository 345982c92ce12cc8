package migrate

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/frontend/nic"
)

// The docs' prose and the registries' notes are written by hand, so they
// can keep saying that something is missing after the code gained it.
// These tests read every sentence of docs/*.md (outside the generated
// sections, which the registries write) and every note of the registries,
// and fail when one denies what the code does.

const docsDir = "../../docs"

// denial is a sentence saying something is not there.
var denial = regexp.MustCompile(`(?i)\bnot (yet )?supported\b|\bunsupported\b|\bnot read\b|\bdoes not read\b`)

// backticked are `names` in a sentence.
var backticked = regexp.MustCompile("`([a-z0-9.-]+/)?([a-z0-9-]+)`")

// retiredClaims were true once: each names the code that made it false.
// Deleting that code is the only way to make the claim acceptable again.
var retiredClaims = []struct {
	claim *regexp.Regexp
	fact  string
	holds func() bool
}{
	{regexp.MustCompile(`(?i)TCP (and|or|/) ?UDP (stream )?services (are|is) not supported`),
		"the tcp-services and udp-services ConfigMaps are served (build.Options.TCPServices, docs/layer4.md)",
		func() bool { _, ok := reflect.TypeOf(build.Options{}).FieldByName("TCPServices"); return ok }},
	{regexp.MustCompile(`(?i)no TCP or UDP \(stream\) services`),
		"the tcp-services and udp-services ConfigMaps are served (build.Options.TCPServices)",
		func() bool { _, ok := reflect.TypeOf(build.Options{}).FieldByName("TCPServices"); return ok }},
	{regexp.MustCompile(`(?i)(controller|Causeway) does not read (them|the CRDs|custom resources|NGINX Ingress Controller)`),
		"the nic front-end reads NGINX Ingress Controller's resources (nic.TranslateVirtualServer)",
		func() bool { return reflect.ValueOf(nic.TranslateVirtualServer).IsValid() }},
	{regexp.MustCompile(`(?i)no .?Strict-Transport-Security.? header is sent`),
		"the ConfigMap's hsts is read", keyParsed("hsts")},
	{regexp.MustCompile(`(?i)PROXY protocol (is|are) not supported|and the PROXY protocol are not supported`),
		"the ConfigMap's use-proxy-protocol is read", keyParsed("use-proxy-protocol")},
	{regexp.MustCompile(`(?i)responses are not compressed`),
		"the ConfigMap's use-gzip is read", keyParsed("use-gzip")},
	{regexp.MustCompile(`(?i)access log has one fixed format`),
		"the ConfigMap's log-format-upstream is read", keyParsed("log-format-upstream")},
}

func keyParsed(name string) func() bool {
	return func() bool { k, ok := configmap.LookupKey(name); return ok && k.Status.Parsed() }
}

// docSentences returns each doc's prose sentences, without generated
// sections and code blocks.
func docSentences(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(docsDir, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs in %s: %v", docsDir, err)
	}
	generatedBlock := regexp.MustCompile(`(?s)<!-- BEGIN GENERATED.*?<!-- END GENERATED[^>]*-->`)
	codeBlock := regexp.MustCompile("(?s)```.*?```")
	out := map[string][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := codeBlock.ReplaceAllString(generatedBlock.ReplaceAllString(string(data), ""), "")
		out[filepath.Base(f)] = sentences(text)
	}
	return out
}

// sentences splits prose at sentence ends, paragraphs, list items and
// table cells.
func sentences(text string) []string {
	var out []string
	for _, para := range regexp.MustCompile(`\n\s*\n|\n\s*[-*] |\|`).Split(text, -1) {
		para = strings.Join(strings.Fields(para), " ")
		for _, s := range regexp.MustCompile(`[.;] `).Split(para, -1) {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// registryNotes are the hand-written texts of the registries.
func registryNotes() map[string][]string {
	out := map[string][]string{}
	for _, k := range configmap.Keys() {
		out["ConfigMap key "+k.Name] = sentences(k.Note + ". " + k.Difference)
	}
	for _, a := range annotations.Known() {
		out["annotation "+a.Name] = sentences(a.Instead + ". " + a.Grammar + ". " + a.Difference)
	}
	return out
}

// TestDocsDoNotDenySupportedSettings: no sentence says that a ConfigMap
// key or an annotation the registries mark as read is not supported.
func TestDocsDoNotDenySupportedSettings(t *testing.T) {
	read := map[string]bool{}
	for _, k := range configmap.Keys() {
		read[k.Name] = k.Status.Parsed()
	}
	for _, a := range annotations.Known() {
		if a.Family == annotations.FamilyIngressNginx {
			read[a.Name] = read[a.Name] || a.Status == annotations.AnnotationSupported
		}
	}
	for where, ss := range docSentences(t) {
		for _, s := range ss {
			if !denial.MatchString(s) {
				continue
			}
			for _, m := range backticked.FindAllStringSubmatch(s, -1) {
				if read[m[2]] && !exemptDenial(s, m[2]) {
					t.Errorf("%s says %q, but the registry reads `%s`", where, s, m[2])
				}
			}
		}
	}
}

// exemptDenial: sentences that deny a value or a combination of a key the
// registry reads, not the key.
func exemptDenial(s, name string) bool {
	// "`x` ... is refused" of a value; "a value of `x` ... not supported".
	return regexp.MustCompile(`(?i)(value|values|entry|entries|with|without|combination|form|unit|units|only)\b`).MatchString(s) &&
		!regexp.MustCompile("(?i)`"+regexp.QuoteMeta(name)+"`[^.]*(is|are) not (yet )?supported\\b").MatchString(s)
}

// TestDocsMakeNoRetiredClaims: no doc or registry note repeats a claim
// the code has made false.
func TestDocsMakeNoRetiredClaims(t *testing.T) {
	texts := docSentences(t)
	for k, v := range registryNotes() {
		texts[k] = v
	}
	for _, rc := range retiredClaims {
		if !rc.holds() {
			t.Errorf("the fact %q no longer holds: drop the claim %q from retiredClaims", rc.fact, rc.claim)
			continue
		}
		for where, ss := range texts {
			for _, s := range ss {
				if rc.claim.MatchString(s) {
					t.Errorf("%s says %q, but %s", where, s, rc.fact)
				}
			}
		}
	}
}
