package metrics

import "time"

// Keys are the keys a configuration's locations set for a log nginx
// writes the controller (a metrics series key, a span key), each with
// what it stands for. A key the configuration stops naming stays known
// for a grace period: old workers still finish its requests and write
// their last lines after a reload.
type Keys[L any] struct {
	m map[string]*Key[L]
	// Same, if set, tells labels equal: a key named again with the same
	// labels is then kept rather than allocated again (a sync at 10,000
	// Ingresses names 20,000 keys, nearly all known).
	Same func(a, b L) bool
}

// Key is one known key.
type Key[L any] struct {
	// Name is the map's key, shared by whatever refers to it.
	Name   string
	Labels L
	// expires is when a key the configuration no longer names is
	// forgotten; zero while it names it.
	expires time.Time
}

// Set makes keys the configuration's; the others expire after grace
// from now, unless already expiring.
func (k *Keys[L]) Set(keys map[string]L, now time.Time, grace time.Duration) {
	k.Add(keys)
	for name, kk := range k.m {
		if _, ok := keys[name]; ok {
			continue
		}
		if kk.expires.IsZero() {
			kk.expires = now.Add(grace)
		}
	}
}

// Add makes keys the configuration's too, beside those it names already.
func (k *Keys[L]) Add(keys map[string]L) {
	if k.m == nil {
		k.m = make(map[string]*Key[L], len(keys))
	}
	for name, l := range keys {
		if kk := k.m[name]; kk != nil && k.Same != nil && k.Same(kk.Labels, l) {
			kk.expires = time.Time{}
			continue
		}
		k.m[name] = &Key[L]{Name: name, Labels: l}
	}
}

// Expire forgets the keys past their grace, and returns them.
func (k *Keys[L]) Expire(now time.Time) map[string]bool {
	var gone map[string]bool
	for name, kk := range k.m {
		if !kk.expires.IsZero() && now.After(kk.expires) {
			delete(k.m, name)
			if gone == nil {
				gone = map[string]bool{}
			}
			gone[name] = true
		}
	}
	return gone
}

// Get finds a key.
func (k *Keys[L]) Get(name string) (*Key[L], bool) {
	kk, ok := k.m[name]
	return kk, ok
}

// GetBytes finds a key by a line's bytes, without copying them.
func (k *Keys[L]) GetBytes(name []byte) (*Key[L], bool) {
	kk, ok := k.m[string(name)]
	return kk, ok
}

// Len is the number of keys known.
func (k *Keys[L]) Len() int { return len(k.m) }
