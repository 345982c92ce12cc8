package nic

import (
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/snippet"
)

// Snippet is a snippet field of a VirtualServer or VirtualServerRoute
// (spec.http-snippets, spec.server-snippets, a route's location-snippets)
// as package snippet reads it: the grammar and allowlist of the ConfigMap's
// http-snippet and of the ingress-nginx annotations server-snippet and
// configuration-snippet. It is never pasted. Whether
// it applies (the ConfigMap's allow-snippet-annotations, the headers-more
// module, access checks it could bypass) is the builder's decision, made
// with the same rules as for the annotations.
type Snippet struct {
	// Object and Field name where it is written, for Problems.
	Object model.ObjectRef
	Field  string
	// Snippet is what it adds; nil when Err refused it.
	Snippet *model.Snippet
	Err     error
	// Denies says that its words look meant to keep requests out
	// (snippet.Denies): refused, it closes what it applies to.
	Denies bool
}

// readSnippet reads a snippet field; nil when the field is empty.
func (t *translator) readSnippet(field, text string, ctx snippet.Context) *Snippet {
	if text == "" {
		return nil
	}
	s := &Snippet{Object: t.ref, Field: field, Denies: snippet.Denies(text)}
	s.Snippet, s.Err = snippet.Parse(text, ctx)
	return s
}
