package migrate

import (
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/nginxflags"
)

// The generated sections of docs/migrating-from-ingress-nginx.md. Each sits
// between a begin and an end marker; the test in docs_test.go keeps them
// equal to these functions' output (go test ./internal/migrate -update
// rewrites them).

// DifferencesMarkdown lists every supported annotation and ConfigMap key
// whose behaviour differs from ingress-nginx's, with the difference.
func DifferencesMarkdown() string {
	var b strings.Builder
	b.WriteString("#### Annotations\n\n")
	for _, a := range annotations.Known() {
		// nginx.org annotations differ from NGINX Ingress Controller's,
		// which docs/annotations.md lists.
		if a.Difference != "" && a.Family != annotations.FamilyNIC {
			fmt.Fprintf(&b, "- `%s`: %s.\n", a.Key(annotations.DefaultPrefix), mdText(a.Difference))
		}
	}
	b.WriteString("\n#### ConfigMap keys\n\n")
	for _, k := range configmap.Keys() {
		if k.Difference != "" {
			fmt.Fprintf(&b, "- `%s`: %s.\n", k.Name, mdText(k.Difference))
		}
	}
	b.WriteString("\n#### Controller flags\n\n")
	for _, f := range nginxflags.All() {
		if f.Difference != "" {
			fmt.Fprintf(&b, "- `--%s`: %s.\n", f.Name, mdText(f.Difference))
		}
	}
	return b.String()
}

// FlagsMarkdown is the table of ingress-nginx's controller flags: its
// default, the status, the Causeway flag that takes it, and the
// difference or what to use instead. klog's logging flags, all
// not-applicable but -v, share one row.
func FlagsMarkdown() string {
	var b strings.Builder
	b.WriteString("| ingress-nginx flag | ingress-nginx default | status | Causeway flag | notes |\n|---|---|---|---|---|\n")
	var klog []string
	klogNote := ""
	for _, f := range nginxflags.All() {
		if f.Klog && f.Status == nginxflags.NotApplicable {
			klog = append(klog, "`--"+f.Name+"`")
			klogNote = f.Instead
			continue
		}
		causeway, note := "", f.Instead
		if f.Status.Taken() {
			causeway, note = "`--"+f.Causeway+"`", f.Difference
		}
		if f.Status == nginxflags.Unsupported && f.Harmless != "" {
			note += "; " + code(f.Harmless) + " asks for nothing Causeway lacks"
		}
		fmt.Fprintf(&b, "| `--%s` | %s | %s | %s | %s |\n", f.Name, code(f.Default), f.Status, causeway, mdText(note))
	}
	fmt.Fprintf(&b, "| %s (klog's) | | %s | | %s |\n", strings.Join(klog, ", "), nginxflags.NotApplicable, mdText(klogNote))
	return b.String()
}

// ConfigMapKeysMarkdown is the table of every ConfigMap key: its status,
// ingress-nginx's default, and what to know.
func ConfigMapKeysMarkdown() string {
	var b strings.Builder
	b.WriteString("| key | status | ingress-nginx default | notes |\n|---|---|---|---|\n")
	for _, k := range configmap.Keys() {
		status := string(k.Status)
		if k.Security {
			status += " (security)"
		}
		note := k.Note
		switch {
		case k.Status == configmap.KeyDifferent:
			note = "Causeway's default " + code(k.Default) + "; " + k.Difference
		case k.Status == configmap.KeySupported:
			note = "Causeway's default " + code(k.Default)
		case k.Status == configmap.KeyCausewayOnly:
			note = "default " + code(k.Default) + "; " + k.Note
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Name, status, code(k.NginxDefault), mdText(note))
	}
	return b.String()
}

// code formats a value as inline code, and a description of one ("the
// number of CPUs") as text.
func code(v string) string {
	if v == "" || strings.HasPrefix(v, "the ") || strings.Contains(v, "'s ") || strings.HasPrefix(v, "randomly ") {
		return v
	}
	return "`" + v + "`"
}

// AnnotationDefaultsMarkdown is the table of docs/configuration.md's
// "Defaults of per-location annotations": each ConfigMap key that sets the
// default of the annotation of the same name, where it applies, and the
// values its annotation's grammar accepts.
func AnnotationDefaultsMarkdown() string {
	var b strings.Builder
	b.WriteString("| key | default | example | applies to | accepted values |\n|---|---|---|---|---|\n")
	for _, d := range annotations.DefaultKeys() {
		k, _ := configmap.LookupKey(d.Name)
		a, _ := annotations.Lookup(annotations.FamilyIngressNginx, d.Name)
		where := "Ingress hosts"
		if d.Scope == annotations.ScopeLocation {
			where = "Ingress paths"
			if d.DefaultBackend {
				where += ", the default backend"
			}
			if d.VirtualServers {
				where += ", VirtualServer routes"
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s | %s |\n", d.Name, code(k.Default), d.Example, where, mdText(a.Grammar))
	}
	return b.String()
}

// mdText escapes what Markdown would read as markup in registry prose:
// table pipes, emphasis stars and underscores, and a leading or bare
// asterisk.
func mdText(s string) string {
	r := strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", `\<`)
	return r.Replace(s)
}
